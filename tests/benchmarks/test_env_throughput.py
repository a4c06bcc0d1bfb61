"""The env benchmark runs end to end on a tiny configuration and reports sane numbers."""

import json

from gomoku_jax import cli
from gomoku_jax.benchmarks import env_throughput

# 15x15, batch 2, 4 moves: the playout is the program of gpu_check.py's tiny env row for
# Gomoku (test_gpu_check.py), and both tests here run the same two programs.
SIZES = {"board_size": 15, "batch": 2, "steps": 4}


def test_tiny_run_with_openspiel_reference(tmp_path):
    ticks = []
    results = env_throughput.run_benchmark(
        board_size=SIZES["board_size"], batches=[SIZES["batch"]], steps=SIZES["steps"],
        repeats=1, references=("openspiel",), openspiel_steps=50, log=lambda s: None,
        tick=ticks.append)
    assert sum(ticks) == len(results) == env_throughput.count_configurations(
        [SIZES["batch"]], ("step", "playout"), ("openspiel",)) == 4
    systems = {(m.system, m.variant) for m in results}
    assert ("gomoku_jax", "step") in systems and ("gomoku_jax", "playout") in systems
    assert any(s.startswith("OpenSpiel") for s, _ in systems)
    for m in results:
        assert m.work == m.batch * m.steps_per_call
        assert m.wall_s > 0 and m.cpu_s >= 0 and m.per_wall_s > 0
    table = env_throughput.render_table(results, SIZES["board_size"])
    assert table.startswith("| system | variant | batch")
    assert "x OpenSpiel" in table  # the ratio line for batch 2


def test_cli_writes_table_and_json(tmp_path, capsys):
    out, js = tmp_path / "t.md", tmp_path / "t.json"
    assert cli.main(["bench", "--board-size", str(SIZES["board_size"]), "--batch-sizes",
                     str(SIZES["batch"]), "--steps", str(SIZES["steps"]), "--repeats", "1",
                     "--references", "none", "--out", str(out), "--json", str(js)]) == 0
    assert "| gomoku_jax | playout | 2 |" in out.read_text()
    rows = json.loads(js.read_text())
    assert {r["variant"] for r in rows} == {"step", "playout"}


def test_configurations_count_the_rows_of_every_part():
    count = env_throughput.count_configurations
    assert count([1, 16], ["step", "playout"], ["openspiel", "pgx"]) == 4 + 2 + 2 * 2
    assert count([1, 16], ["step"], ["openspiel", "pgx"], [8]) == 2 + 1  # pgx: playouts only
    assert count([1], ["playout"], ["pgx"], [8, 64, 256]) == 1 + 2 * 3
