"""experiments/ladder_diff.py: the paired difference of two ladders, checked on simulated
ladders with a known difference."""

import json

import numpy as np
import pytest
from experiment_scripts import load_script

ld = load_script("ladder_diff")


def simulated_pairs(rng, n, delta):
    """n openings: B wins each game of opening i with probability p_i ~ U(0.05, 0.6), A with
    p_i + delta (both games of a pair independent); the true mean difference per game is
    delta exactly."""
    p = rng.uniform(0.05, 0.6, n)
    return rng.binomial(2, p + delta).astype(float), rng.binomial(2, p).astype(float)


@pytest.mark.parametrize("n, delta", [(20, 0.0), (20, 0.15), (40, 0.3)])
def test_the_interval_covers_the_known_difference(n, delta):
    rng = np.random.default_rng(n + int(100 * delta))
    covered = tried = 0
    for _ in range(2000):
        a, b = simulated_pairs(rng, n, delta)
        row = ld.difference(a, b)
        if row["lower"] is None:  # no spread: no interval (vanishingly rare here)
            continue
        tried += 1
        covered += row["lower"] <= delta <= row["upper"]
        assert row["better"] + row["same"] + row["worse"] == n
        assert row["mean"] == pytest.approx((a - b).mean() / 2)
    assert tried >= 1990
    # 2,000 ladders: the coverage's standard error is 0.5 points
    assert 0.93 <= covered / tried <= 0.97, covered / tried


def test_no_spread_no_interval_and_bad_lengths():
    row = ld.difference([2, 1, 0], [1, 0, -1])
    assert row["mean"] == 0.5 and row["lower"] is None and row["better"] == 3
    with pytest.raises(ValueError, match="two equal lists"):
        ld.difference([1, 2], [1])


def ladder(argv, results, openings=([0, 1],), nodes=100):
    games = []
    for i, (black, white) in enumerate(results):
        games += [{"opening": i, "a_black": True, "result": black},
                  {"opening": i, "a_black": False, "result": white}]
    return {"mode": "ladder", "engine": "ext", "config": {"board_size": 7, "rule": "freestyle"},
            "openings": [list(o) for o in openings], "ours": {"argv": argv},
            "rungs": [{"nodes": nodes, "games": games}, {"nodes": 5, "failed": "no START"}]}


def test_end_to_end_and_errors(tmp_path, capsys):
    openings = [[0, 1], [2, 3], [4, 5], [6, 7]]
    a = ladder(["ours", "A"], [(1, 1), (1, 0), (0.5, 0), (1, 0)], openings)
    b = ladder(["ours", "B"], [(1, 0), (0, 0), (0, 0), (1, 0)], openings)
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b))
    out = tmp_path / "d.json"
    assert ld.main([str(pa), str(pb), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    [row] = json.loads(out.read_text())["rungs"]
    # d = (1, 1, 0.5, 0): mean 0.625 per pair, 0.3125 per game
    assert row["mean"] == pytest.approx(0.3125) and (row["better"], row["same"]) == (3, 1)
    assert row["score_a"] == pytest.approx(4.5 / 8) and row["score_b"] == pytest.approx(2 / 8)
    assert row["lower"] < row["mean"] < row["upper"]
    assert "| 100 | 56.2% | 25.0% | 3/1/0 | +31.2 |" in text

    # A ladder played in two parts is the same ladder
    a1 = ladder(["ours", "A"], [(1, 1), (1, 0)], openings[:2])
    a2 = ladder(["ours", "A"], [(0.5, 0), (1, 0)], openings[2:])
    (tmp_path / "a1.json").write_text(json.dumps(a1))
    (tmp_path / "a2.json").write_text(json.dumps(a2))
    parts = f"{tmp_path / 'a1.json'},{tmp_path / 'a2.json'}"
    assert ld.main([parts, str(pb), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["rungs"] == [row]
    assert ld.concatenate([a1, a2])["rungs"][0]["games"] == a["rungs"][0]["games"]
    capsys.readouterr()

    other = ladder(["ours", "B"], [(1, 0)] * 4, [[0, 1], [2, 3], [4, 5], [6, 8]])
    pb.write_text(json.dumps(other))
    with pytest.raises(SystemExit, match="same board, rule and openings"):
        ld.main([str(pa), str(pb)])
    pb.write_text(json.dumps({"mode": "tournament"}))
    with pytest.raises(SystemExit, match="is not a ladder record"):
        ld.main([str(pa), str(pb)])
