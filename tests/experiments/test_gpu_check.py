"""experiments/gpu_check.py: the tiny check runs end to end on the CPU through the command
line (every section, every row measured, the JSON and the markdown agreeing); a spent budget
skips every measurement and still writes both files; a failing measurement or section is
recorded, the run goes on, and only `--strict` turns it into exit status 1. No timed asserts.
"""

import importlib.util
import json

import pytest
from experiment_scripts import load_script

from gomoku_jax.benchmarks.timing import fmt_rate

gc = load_script("gpu_check")

HAS_PGX = importlib.util.find_spec("pgx") is not None


def run(out, *argv) -> int:
    return gc.main(gc.build_parser().parse_args(["--tiny", "--out", str(out), "--no-progress",
                                                 *argv]))


def read(out) -> tuple[dict, str]:
    return json.loads((out / "gpu_check.json").read_text()), (out / "gpu_check.md").read_text()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(exit status, JSON, markdown) of one tiny --strict run (shared: it compiles ~15
    programs)."""
    out = tmp_path_factory.mktemp("gpu_check")
    status = run(out, "--strict")
    return (status, *read(out))


def line_of(markdown: str, *cells) -> str:
    """The one table line that starts with these cells."""
    head = "| " + " | ".join(map(str, cells)) + " |"
    (line,) = [x for x in markdown.splitlines() if x.startswith(head)]
    return line


@pytest.mark.slow
def test_tiny_run_passes_strict_and_restores_the_timers(tiny):
    status, data, markdown = tiny
    assert status == 0 and data["failed"] is False
    assert gc.timing.time_jitted is gc._TIME_JITTED
    assert gc.bench_train.time_jitted is gc.bench_search.time_jitted is gc._TIME_JITTED
    header = data["header"]
    assert header["versions"]["jax"] and header["device_kind"] and header["args"]["tiny"]
    assert header["sizes"] == json.loads(json.dumps(gc.dataclasses.asdict(gc.TINY)))
    assert [f"## {s}" in markdown for s in gc.SECTIONS] == [True] * 3
    assert markdown.index("## env") < markdown.index("## search") < markdown.index("## train")
    for section in data["sections"].values():
        assert section["error"] is None and section["seconds"] > 0
        assert all(r["status"] == "ok" for r in section["rows"])


@pytest.mark.slow
def test_env_rows(tiny):
    _, data, markdown = tiny
    rows = data["sections"]["env"]["rows"]
    games = {("gomoku_jax", "gomoku 15x15"), ("gomoku_jax", "fauxgo 9x9")}
    if HAS_PGX:
        games |= {("pgx", "go_9x9"), ("pgx", "connect_four")}
    assert {(r["system"], r["game"]) for r in rows} == games
    assert {r["batch"] for r in rows} == set(gc.TINY.env_batches)
    for r in rows:
        assert r["steps_per_s"] > 0 and r["steps_per_cpu_s"] > 0 and r["compile_s"] > 0
        assert r["moves_per_call"] == gc.TINY.env_steps
        assert r["steps_per_call"] == r["batch"] * gc.TINY.env_steps
        assert r["memory"]["argument"] > 0 and r["timed_calls"] == gc.TINY.repeats
        line = line_of(markdown, r["system"], r["game"], r["batch"])
        assert fmt_rate(r["steps_per_s"]) in line and fmt_rate(r["steps_per_cpu_s"]) in line


@pytest.mark.slow
def test_search_rows_both_evaluators_with_both_loops(tiny):
    _, data, markdown = tiny
    rows = data["sections"]["search"]["rows"]
    evaluators = ("heuristic", "network 2x16 bf16")
    assert [(r["evaluator"], r["loop"]) for r in rows] == [
        (e, loop) for e in evaluators for loop in ("gomoku_jax", "mctx")]
    for r in rows:
        assert r["sims_per_s"] > 0 and r["compile_s"] > 0 and r["memory"]["total"] > 0
        assert r["sims_per_call"] == gc.TINY.search_batch * gc.TINY.search_sims
        mctx = next(m for m in rows if m["evaluator"] == r["evaluator"] and m["loop"] == "mctx")
        assert r["vs_mctx"] == pytest.approx(r["sims_per_s"] / mctx["sims_per_s"])
        line = line_of(markdown, r["evaluator"], r["loop"], r["batch"], r["simulations"])
        assert fmt_rate(r["sims_per_s"]) in line and f"{r['vs_mctx']:.2f}x" in line


@pytest.mark.slow
def test_train_rows_with_flops_and_mfu(tiny):
    _, data, markdown = tiny
    section = data["sections"]["train"]
    assert section["preset"] == "test" and section["config"]["optim"]["sgd_steps"] == 2
    peak = section["peak"]["flops_per_s"]
    assert section["peak"]["source"].startswith("measured matmul peak")  # CPU: no spec sheet
    matmul, selfplay, step, scan = section["rows"]
    assert matmul["program"] == "matmul float32" and matmul["flops_per_s"] == peak
    assert selfplay["positions_per_s"] > 0 and selfplay["simulations_per_s"] > 0
    assert selfplay["model_mfu"] > 0 and selfplay["compile_s"] > 0
    for r in (step, scan):
        assert r["samples_per_s"] > 0 and r["compile_s"] > 0 and r["memory"]["total"] > 0
        assert r["xla_flops_per_call"] > 0 and r["flops_per_s"] > 0
        assert r["mfu"] == pytest.approx(r["flops_per_s"] / peak) and r["mfu"] > 0
        assert r["model_mfu"] > 0
        line = line_of(markdown, r["program"])
        assert fmt_rate(r["samples_per_s"]) in line and f"{r['xla_flops_per_call'] / 1e9:.4g}" \
            in line
    assert (step["steps"], scan["steps"]) == (1, 2)
    # the scan's FLOPs are K x the one-step program's (XLA counts a loop body once)
    assert scan["xla_flops_per_call"] == 2 * step["xla_flops_program"]
    assert fmt_rate(selfplay["positions_per_s"]) in line_of(markdown, "self-play")


def test_a_spent_budget_skips_everything_and_still_writes_both_files(tmp_path, capsys):
    assert run(tmp_path, "--budget-seconds", "0", "--strict") == 0
    data, markdown = read(tmp_path)
    rows = [r for s in data["sections"].values() for r in s["rows"]]
    assert len(rows) == 4 * len(gc.TINY.env_batches) + 4 + 4
    assert all(r["status"] == "skipped" and r["note"].startswith("skipped: over budget")
               for r in rows)
    assert markdown.count("skipped: over budget") == len(rows)
    assert capsys.readouterr().out.rstrip().endswith(markdown.rstrip())


def test_failures_are_recorded_and_only_strict_fails(tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(gc.env_throughput, "bench_playouts", boom)
    monkeypatch.setattr(gc.bench_search, "start_positions", boom)
    argv = ("--sections", "env,search", "--env-batches", "8")
    assert run(tmp_path, *argv) == 0
    data, markdown = read(tmp_path)
    env, search = data["sections"]["env"], data["sections"]["search"]
    assert env["error"] is None
    assert all(r["status"] == "error" and "RuntimeError: boom" in r["note"]
               for r in env["rows"] if r["system"] == "gomoku_jax")
    assert "RuntimeError: boom" in search["error"]
    assert all(r["status"] == "error" and "not reached" in r["note"] for r in search["rows"])
    assert data["sections"]["train"]["rows"] == [] and data["failed"]
    assert "Section error:" in markdown and "RuntimeError: boom" in markdown
    assert run(tmp_path, *argv, "--strict") == 1


@pytest.mark.parametrize("argv", [["--sections", "env,gpu"], ["--sections", "env,env"],
                                  ["--sims", "0"], ["--max-seconds", "0"],
                                  ["--set", "selfplay.games=0"], ["--env-batches", "8,x"]])
def test_bad_flags_exit_with_a_message(tmp_path, argv):
    with pytest.raises(SystemExit, match="error"):
        run(tmp_path, *argv)
