"""compare.runner, report and `gomoku-jax compare` end to end: two arms x two seeds on the
test preset, killed in the middle and continued; the table, JSON and plot it writes."""

from __future__ import annotations

import json

import pytest
from train_configs import PROGRAM_SETS

from gomoku_jax import cli
from gomoku_jax.compare import report, runner
from gomoku_jax.compare.spec import Budget, Comparison, parse_arm

# Arm a trains the session's run's program (conftest's `trained_run`), arm b bootstraps its
# first iteration with the heuristic evaluator (tests/train/test_bootstrap.py's programs):
# two arms that train differently, and no program of their own. The references, games and
# eval agent are notebooks/07_compare.ipynb's and test_ladder.py's: their matches compile
# once a session (the persistent cache serves the others).
ARM_A = "a: " + " ".join(PROGRAM_SETS)
ARM_B = "b: " + " ".join((*PROGRAM_SETS, "selfplay.bootstrap_iterations=1",
                          "selfplay.bootstrap_evaluator=heuristic"))
ARGS = ["--preset", "test", "--seeds", "2", "--iterations", "2", "--points", "2",
        "--games", "8", "--references", "random,proximity_random",
        "--eval-agent", "policy:evaluator=network", "--no-progress",
        "--arm", ARM_A, "--arm", ARM_B]
MATCHES_BEFORE_KILL = 5  # rating matches: a/seed0 at both points, a/seed1's first


class Killed(Exception):
    pass


@pytest.fixture(scope="module")
def comparison(tmp_path_factory):
    """(out dir, metrics of a/seed0 at the kill, matches at the kill), after a comparison
    killed at its 6th rating match and rerun to the end."""
    out = tmp_path_factory.mktemp("cmp")
    real = runner.run_match
    calls = []

    def dying(*args, **kwargs):
        calls.append(1)
        if len(calls) > MATCHES_BEFORE_KILL:
            raise Killed
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runner, "run_match", dying)
        with pytest.raises(Killed):
            cli.main(["compare", "--out", str(out), *ARGS])
    metrics = (out / "runs/a/seed0/metrics.jsonl").read_text()
    at_kill = (out / runner.MATCHES_FILE).read_text().splitlines()
    assert cli.main(["compare", "--out", str(out), *ARGS]) == 0
    return out, metrics, at_kill


@pytest.mark.slow
def test_kill_then_resume_does_each_thing_once(comparison):
    out, metrics, at_kill = comparison
    # The pool's match and every rating match were saved as they finished.
    assert len(at_kill) == 1 + MATCHES_BEFORE_KILL
    rows = [json.loads(line) for line in (out / runner.MATCHES_FILE).read_text().splitlines()]
    keys = [(r["run"], r["seed"], r["point"], r["a"], r["b"]) for r in rows]
    assert len(keys) == len(set(keys)) == 1 + 2 * 2 * 2 * 2
    assert rows[:len(at_kill)] == [json.loads(line) for line in at_kill]
    # a/seed0 was finished before the kill: not trained again.
    assert (out / "runs/a/seed0/metrics.jsonl").read_text() == metrics
    for arm in "ab":
        for seed in (0, 1):
            records = runner.read_records(out / f"runs/{arm}/seed{seed}")
            assert [r["iteration"] for r in records] == [1, 2]
            assert all(0.0 <= r["compile_seconds"] <= r["seconds"] for r in records)
            assert {r["iteration"] for r in rows if r["run"] == arm and r["seed"] == seed} \
                == {1, 2}
            assert sorted((out / f"runs/{arm}/seed{seed}/checkpoints").iterdir())


def test_outputs(comparison):
    out, _, _ = comparison
    table = (out / "results.md").read_text()
    assert "| arm | 50% | 100% | gain 50% → 100% |" in table
    for arm in "ab":  # a row in the Elo, distinct games, cost and overrides tables at least
        assert sum(line.startswith(f"| {arm} |") for line in table.splitlines()) >= 4
    assert "| proximity_random |" in table
    # 2 arms x 2 seeds x 16 games a checkpoint: the report says it resolves nothing.
    assert ("This run cannot separate the arms" in table
            or "The arms cannot be compared" in table)
    data = json.loads((out / "results.json").read_text())
    assert data["references"]["random"]["elo"] == 0.0 and data["fit"]["anchor"] == "random"
    assert len(data["checkpoints"]) == 8
    rows = runner.Store(out / runner.MATCHES_FILE).rows
    games: dict[str, int] = {}
    for r in rows:
        for name in (r["a"], r["b"]):
            games[name] = games.get(name, 0) + r["wins"] + r["draws"] + r["losses"]
    assert data["fit"]["games"] == sum(games.values()) // 2
    for r in rows:  # per-colour records that add up, and the distinct games
        for k in ("wins", "draws", "losses"):
            assert r["as_first"][k] + r["as_second"][k] == r[k]
        assert 1 <= r["distinct_games"] <= r["wins"] + r["draws"] + r["losses"]
    for c in data["checkpoints"]:
        assert c["games"] == games[c["label"]] and 1 <= c["distinct_games"] <= c["games"]
        assert (c["elo"] is None) == (c["status"] not in ("rated", "anchor"))
    for arm in ("a", "b"):
        curve = data["arms"][arm]
        assert [p["point"] for p in curve] == [1, 2]
        assert [p["iteration"] for p in curve] == [1.0, 2.0]
        for p in curve:
            assert len(p["ratings"]) == 2 and p["seconds"] >= 0.0
            assert p["training_seconds"]["min"] <= p["seconds"] <= p["training_seconds"]["max"]
            if p["in_range"]:
                assert p["lower"] <= p["mean"] <= p["upper"]
            else:
                assert p["mean"] is None and "out of range" in table
    if set(data["differences"]) == {"a", "b"}:
        ab, ba = data["differences"]["b"]["a"], data["differences"]["a"]["b"]
        assert ab["mean"] == pytest.approx(-ba["mean"]) and ab["margin"] == pytest.approx(
            ba["margin"])
        assert "row − column" in table and "Holm p" in table
        assert data["families"][0]["kind"] == "differences"
    assert "What this design can resolve" in table or not data["families"]
    png = (out / "curves.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_rerun_is_a_no_op_and_another_comparison_is_refused(comparison, capsys):
    out, _, _ = comparison
    before = (out / runner.MATCHES_FILE).read_text()
    assert cli.main(["compare", "--out", str(out), *ARGS]) == 0
    assert (out / runner.MATCHES_FILE).read_text() == before
    other = [a if a != "8" else "16" for a in ARGS]
    with pytest.raises(SystemExit, match="games differ"):
        cli.main(["compare", "--out", str(out), *other])


def test_a_second_comparison_rates_the_same_runs_without_training(comparison, tmp_path):
    out, _, _ = comparison
    metrics = {p: p.read_text() for p in (out / "runs").glob("*/*/metrics.jsonl")}
    assert cli.main(["compare", "--out", str(tmp_path), "--runs", str(out / "runs"),
                     *ARGS, "--seed", "1"]) == 0
    assert {p: p.read_text() for p in (out / "runs").glob("*/*/metrics.jsonl")} == metrics
    assert not (tmp_path / "runs").exists()
    rows = runner.Store(tmp_path / runner.MATCHES_FILE).rows
    assert sorted({(r["run"], r["seed"], r["iteration"]) for r in rows if r["seed"] is not None}
                  ) == [(arm, seed, it) for arm in "ab" for seed in (0, 1) for it in (1, 2)]


def test_a_seconds_budget(comparison, tmp_path):
    """A seconds budget stops each run once its training clock reaches the point; the
    runs share the compiled iteration of the iteration-budget comparison's arm a."""
    spec = Comparison(preset="test", arms=(parse_arm(ARM_A),),
                      seeds=(0,), budget=Budget("seconds", 1e-3, 1),
                      references=("random", "proximity_random"),
                      eval_agent="policy:evaluator=network", games=8, max_iterations=2)
    analysis = runner.run(spec, tmp_path, progress=False)
    records = runner.read_records(tmp_path / "runs/a/seed0")
    assert len(records) == 1 and runner.clock(records) >= 1e-3
    assert analysis["arms"]["a"][0]["iteration"] == 1.0
    assert "training seconds per run" in report.markdown(analysis)


def test_a_seconds_budget_stops_before_an_iteration_would_cross_it():
    """Iterations of 2 s (the first 30 s, 28 of them compiling): a 7 s budget stops after
    the third (6 s; a fourth would end at 8 s), never after crossing it."""
    records = [{"seconds": 30.0, "compile_seconds": 28.0}, {"seconds": 2.0},
               {"seconds": 2.0, "compile_seconds": 0.0}, {"seconds": 2.0}]
    assert not runner.budget_reached([], 7.0)
    stops = [runner.budget_reached(records[:n], 7.0) for n in range(1, 5)]
    assert stops == [False, False, True, True]
    assert runner.clock(records[:3]) == 6.0 <= 7.0
    assert runner.budget_reached(records[:3], 6.0) and not runner.budget_reached(
        records[:2], 6.0)  # 4 + 2 = 6 ends exactly at the budget: run it
    # Iterations that get slower: the estimate is the last one's time.
    slow = [{"seconds": 1.0}, {"seconds": 3.0}]
    assert runner.budget_reached(slow, 6.5) and not runner.budget_reached(slow, 7.0)
    # The first iteration always runs, even when it alone is longer than the budget.
    assert runner.budget_reached(records[:1], 1.0)


def test_clock_leaves_out_compilation():
    records = [{"seconds": 30.0, "compile_seconds": 28.0}, {"seconds": 2.5},
               {"seconds": 2.0, "compile_seconds": 0.0}]
    assert runner.clock(records) == pytest.approx(6.5)


def test_check_same_allows_new_arms_at_the_end(tmp_path):
    spec = Comparison(preset="test", arms=(parse_arm("a:"),), seeds=(0,),
                      budget=Budget("iterations", 1, 1), references=("random",),
                      eval_agent="policy:evaluator=network")
    saved = spec.to_dict()
    more = dict(saved, arms=saved["arms"] + [{"name": "b", "overrides": []}])
    runner.check_same(saved, more, tmp_path)
    with pytest.raises(ValueError, match="arms"):
        runner.check_same(more, saved, tmp_path)
    with pytest.raises(ValueError, match="seeds differ"):
        runner.check_same(saved, dict(saved, seeds=[1]), tmp_path)


@pytest.mark.parametrize("change, message", [
    (dict(eval_agent="mctss:evaluator=network"), "unknown agent 'mctss'"),
    (dict(references=("random", "nope")), "nope"),
    (dict(arms=(parse_arm("a: search.algorithm=nope"),)), "arm a"),
])
def test_bad_specs_fail_before_any_training(tmp_path, change, message):
    fields = dict(preset="test", arms=(parse_arm("a:"),), seeds=(0,),
                  budget=Budget("iterations", 1, 1), references=("random",),
                  eval_agent="policy:evaluator=network")
    with pytest.raises(ValueError, match=message):
        runner.run(Comparison(**{**fields, **change}), tmp_path, progress=False)
    assert not (tmp_path / "runs").exists()
