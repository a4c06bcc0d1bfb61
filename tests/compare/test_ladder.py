"""compare.ladder: the rungs chosen from calibrated candidates (gaps, a middle rung, holes),
a checkpoint's walk and the ladder's extension, the calibration on synthetic games, the
cache file, and one small comparison end to end."""

from __future__ import annotations

import json
import shutil
from typing import NamedTuple

import pytest
from train_configs import PROGRAM_SETS

from gomoku_jax import cli
from gomoku_jax.compare import ladder as L
from gomoku_jax.compare import runner
from gomoku_jax.eval.arena import Record
from gomoku_jax.eval.elo import expected_score


def rated(**elos) -> list[L.Rated]:
    return [L.Rated(n, float(e), float(e), float(e), 0) for n, e in elos.items()]


def test_select_keeps_every_gap_within_the_limit_and_skips_what_it_can():
    chain = L.select(rated(r=0, a=100, b=200, c=400, d=600, e=650), gap=250)
    # b is the farthest within 250 of r; c within 250 of b; e within 250 of c.
    assert chain.rungs == ("r", "b", "c", "e")
    assert [g.elo for g in chain.gaps] == [200, 200, 250]
    assert chain.holes == ()


def test_select_inserts_a_middle_rung():
    assert L.select(rated(r=0, mid=240, top=480), gap=250).rungs == ("r", "mid", "top")
    assert L.select(rated(r=0, top=480), gap=250).rungs == ("r", "top")


def test_select_reports_a_gap_it_cannot_close():
    chain = L.select(rated(r=0, a=200, b=700, c=800), gap=250)
    assert chain.rungs == ("r", "a", "b", "c")
    (hole,) = chain.holes
    assert (hole.low, hole.high, hole.elo, hole.separated) == ("a", "b", 500, False)
    assert "a → b: 500 Elo" in hole.describe()
    # Across a sweep the gap is a bound and always a hole, even when the bound is small.
    sep = L.select([L.Rated("r", 0, 0, 0, 0), L.Rated("s", 120, 120, 120, 1)], gap=250)
    assert sep.holes[0].separated and "≥ 120" in sep.holes[0].describe()


def test_walk_starts_at_the_previous_point_and_stops_once_placed():
    rungs = ("r", "a", "b", "c", "d")
    assert L.next_rung(rungs, {}) == "r"
    assert L.next_rung(rungs, {"r": 1.0}) == "a"
    assert L.next_rung(rungs, {"r": 1.0, "a": 0.6}) == "b"
    assert L.next_rung(rungs, {"r": 1.0, "a": 0.6, "b": 0.05}) is None  # ≤ 10%: stop
    prev = {"r": 1.0, "a": 0.95, "b": 0.4}
    start = L.start_rung(rungs, prev)
    assert start == 1
    # It starts at a, climbs to c (≤ 10%), then steps down: a scored < 90%, so r too.
    scores = {}
    for score in (0.7, 0.3, 0.0, 1.0):
        rung = L.next_rung(rungs, scores, start)
        scores[rung] = score
    assert list(scores) == ["a", "b", "c", "r"]
    assert L.next_rung(rungs, scores, start) is None
    assert L.place(rungs, scores)[0] == L.COVERED
    assert L.place(rungs, {"c": 0.95, "d": 1.0})[0] == L.ABOVE
    assert L.place(rungs, {"r": 0.0, "a": 0.05})[0] == L.BELOW
    status, why = L.place(rungs, {"a": 1.0, "b": 0.0})
    assert status == L.HOLE and "a" in why and "b" in why


def test_next_candidate():
    cands = ("w", "r", "a", "b")
    assert L.next_candidate(cands, ["r", "a"], L.ABOVE) == "b"
    assert L.next_candidate(cands, ["r", "a"], L.BELOW) == "w"
    assert L.next_candidate(cands, ["w", "b"], L.ABOVE) is None
    with pytest.raises(ValueError, match="direction"):
        L.next_candidate(cands, ["r"], "sideways")


class Match(NamedTuple):
    agent_a: str
    agent_b: str
    as_first: Record
    as_second: Record
    distinct_games: int


def synthetic(true: dict[str, float], n: int = 20):
    """A `play(a, b)` whose games follow the true ratings exactly (no noise)."""
    played = []

    def play(a: str, b: str) -> Match:
        played.append((a, b))
        w = round(n * float(expected_score(true[a] - true[b])))
        return Match(a, b, Record(w, 0, n - w), Record(w, 0, n - w), 2 * n)

    return play, played


TRUE = {"random": 0, "p16": 150, "p32": 300, "p64": 450, "heur": 1200, "m8": 1350,
        "m32": 1500}


def test_calibration_places_candidates_and_extends_for_a_checkpoint_above(tmp_path):
    play, played = synthetic(TRUE)
    lad = L.Ladder(tmp_path / L.LADDER_FILE, {"id": "g"}, tuple(TRUE), 250.0, 40)
    lad.start(play)
    assert lad.calibrated == ["random", "p16", "p32"]
    got = lad.rated()
    assert got["p32"].elo == pytest.approx(300, abs=40)
    assert lad.rungs[0] == "random" and lad.rungs[-1] == "p32"
    # A checkpoint at 700 is above the initial ladder: p64 is calibrated, then heur; the
    # 750 between p64 and heur is a hole (separated or not, it is reported) and the
    # checkpoint is placed by p64 / heur.
    checkpoint = 700.0

    def play_rung(name: str) -> float:
        return float(expected_score(checkpoint - TRUE[name]))

    out = L.rate_checkpoint(lad, "arm/seed0/p1", {}, None, play_rung, play)
    assert out["status"] == L.COVERED
    assert "p64" in lad.calibrated and "heur" in lad.calibrated
    assert "m32" not in lad.calibrated  # nothing calibrated beyond need
    assert any(g.low == "p64" and g.high == "heur" for g in lad.chain().holes)
    # A checkpoint above every candidate: the ladder runs out, and it is out of range.
    checkpoint = 3000.0
    out = L.rate_checkpoint(lad, "arm/seed0/p2", {}, {"p64": 1.0}, play_rung, play)
    assert out["status"] == L.ABOVE and lad.calibrated[-1] == "m32"
    assert "arm/seed0/p2" in lad.out_of_range()
    assert "Out of range (1 checkpoint" in L.markdown(lad.to_dict())
    assert len(played) == len({frozenset(p) for p in played})  # no pair played twice

    # The cache: the same ladder comes back, and another gap is refused.
    again = L.Ladder.open(lad.path, {"id": "g"}, tuple(TRUE), 250.0, 40)
    assert again.calibrated == lad.calibrated and again.pairings == lad.pairings
    assert again.checkpoints == lad.checkpoints and again.rungs == lad.rungs
    assert json.loads(lad.path.read_text())["rungs"] == list(lad.rungs)
    again.start(play)  # nothing to play
    assert len(played) == len(lad.pairings)
    with pytest.raises(ValueError, match="gap"):
        L.Ladder.open(lad.path, {"id": "g"}, tuple(TRUE), 200.0, 40)


def test_a_sweep_splits_the_fit_into_segments():
    play, _ = synthetic({"r": 0, "a": 2000, "b": 2100})
    pairings = [L.Pairing.from_match(play("r", "a")), L.Pairing.from_match(play("a", "b"))]
    got = L.fit_candidates(["r", "a", "b"], pairings)
    assert got["a"].segment == 1 == got["b"].segment and got["r"].segment == 0
    # a sits at the sweep's one-sided bound (40 of 40: above +300), b about 100 above it.
    assert 250 < got["a"].elo < 2000
    assert got["b"].elo - got["a"].elo == pytest.approx(100, abs=60)
    assert L.select(got).holes[0].separated


@pytest.mark.slow
def test_a_comparison_on_a_ladder(trained_run, tmp_path):
    runs = tmp_path / "runs"
    for seed in (0, 1):  # conftest's `trained_run`, twice: rated without training
        shutil.copytree(trained_run, runs / "a" / f"seed{seed}")
    out = tmp_path / "cmp"
    # test_runner.py's (and notebooks/07_compare.ipynb's) games, eval agent and references,
    # whose matches compile once a session, and a third candidate for a ladder of three.
    args = ["compare", "--out", str(out), "--runs", str(runs), "--preset", "test",
            "--seeds", "2", "--iterations", "5", "--points", "1", "--games", "8",
            "--ladder", "--references", "random,proximity_random,pure_mcts:num_simulations=4",
            "--eval-agent", "policy:evaluator=network", "--no-progress",
            "--arm", "a: " + " ".join(PROGRAM_SETS)]
    assert cli.main(args) == 0
    data = json.loads((out / L.LADDER_FILE).read_text())
    assert data["rungs"][0] == "random" and set(data["checkpoints"]) == {
        "a/seed0/p1", "a/seed1/p1"}
    rows = [json.loads(x) for x in (out / runner.MATCHES_FILE).read_text().splitlines()]
    assert len([r for r in rows if r["run"] == runner.POOL]) == len(data["matches"])
    assert [(r["a"], r["b"]) for r in rows if r["run"] == runner.ROUND_ROBIN] == [
        ("a/seed0/p1", "a/seed1/p1")]
    results = json.loads((out / "results.json").read_text())
    assert results["ladder"]["rungs"] == data["rungs"]
    assert "Reference ladder" in (out / "results.md").read_text()
    before = (out / runner.MATCHES_FILE).read_text()
    assert cli.main(args) == 0  # a rerun reuses the calibration and the matches
    assert (out / runner.MATCHES_FILE).read_text() == before


def test_the_ladder_is_the_default_unless_references_are_given():
    from gomoku_jax.cli import compare as cli_compare
    from gomoku_jax.compare.spec import Comparison, default_ladder, default_references

    parse = cli_compare.build_parser().parse_args
    base = ["--out", "x", "--preset", "test", "--iterations", "5", "--arm", "a:"]
    spec = cli_compare.spec_from_args(parse(base))
    assert spec.ladder and spec.references == default_ladder("gomoku")
    assert spec.ladder_gap == 250.0
    fixed = cli_compare.spec_from_args(parse([*base, "--references", "random,heuristic"]))
    assert not fixed.ladder and fixed.references == ("random", "heuristic")
    off = cli_compare.spec_from_args(parse([*base, "--no-ladder"]))
    assert not off.ladder and off.references == default_references("gomoku")
    # A spec saved before the ladder existed reads back with it off.
    old = {k: v for k, v in fixed.to_dict().items() if k not in ("ladder", "ladder_gap")}
    assert Comparison.from_dict(old) == fixed
    with pytest.raises(ValueError, match="ladder_gap"):
        cli_compare.spec_from_args(parse([*base, "--ladder-gap", "0"]))
