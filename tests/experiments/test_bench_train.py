"""experiments/bench_train.py: the MFU reference it picks, the network evaluation run end to
end through the command line, and every other measurement traced against the package with
the tables and JSON they feed. No timed asserts.

Compiling self-play, SGD and a whole iteration takes minutes on a 2-core CPU, so
`test_every_measurement_traces_against_the_package` swaps the script's timer for one that
traces each function (every call into the package is checked: signatures, shapes,
shardings) without compiling it, and reports made-up times; its trainers' fresh states are
traced too (`TracedAlphaZero`)."""

import dataclasses
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from experiment_scripts import load_script

bt = load_script("bench_train")

# The "test" preset (7x7, tiny net) at its smallest: B x T x S = 2 x 2 x 2, K x batch = 1 x 8.
TINY = ["selfplay.games=2", "selfplay.moves=2", "selfplay.num_simulations=2",
        "optim.batch_size=8", "optim.sgd_steps=1"]


def test_mfu_reference_by_device_kind_and_dtype():
    assert bt.spec_peak("NVIDIA H100 80GB HBM3", "bfloat16") == pytest.approx(989e12)
    assert bt.spec_peak("NVIDIA H100 PCIe", "float32") == pytest.approx(51e12)
    assert bt.spec_peak("NVIDIA H200", "bfloat16") == pytest.approx(989e12)
    assert bt.spec_peak("TPU v4", "float32") is None and bt.spec_peak("cpu", "float32") is None
    both = {"float32": {"flops_per_s": 5e10, "size": 256},
            "bfloat16": {"flops_per_s": 3e10, "size": 256}}
    assert bt.measured_rate(both, "bfloat16") == (5e10, "float32")  # the faster of the two
    cpu = bt.choose_peak("cpu", "bfloat16", both, None)
    assert (cpu.flops_per_s, cpu.dtype) == (5e10, "float32")
    assert cpu.source == "measured matmul peak (256^3)"
    assert bt.choose_peak("NVIDIA H100 80GB HBM3", "bfloat16", both, None).source == (
        "vendor spec sheet")
    given = bt.choose_peak("NVIDIA H100 80GB HBM3", "bfloat16", both, 100.0)
    assert given.flops_per_s == pytest.approx(1e14) and given.source == "--peak-tflops"
    assert bt.k_label(8, 256, 8) == "8 x 256 unrolled" and bt.k_label(8, 256, 1) == "8 x 256"


def test_eval_end_to_end_through_the_cli(tmp_path, capsys):
    out, js = tmp_path / "train.md", tmp_path / "train.json"
    argv = ["--presets", "test", "--measure", "eval", "--eval-batch-sizes", "2,4",
            "--repeats", "1", "--matmul-size", "128", "--peak-tflops", "0.001",
            "--out", str(out), "--json", str(js)]
    for item in TINY:
        argv += ["--set", item]
    assert bt.main(bt.build_parser().parse_args(argv)) == 0
    report = out.read_text()
    assert report.strip() in capsys.readouterr().out
    assert "| test | cpu | 2x16 f32 | 2 x 2 x 2 | 1 x 8 |" in report
    assert "## Network evaluation" in report
    assert "| test | 2x16 f32 | 2 |" in report and "| test | 2x16 f32 | 4 |" in report
    data = json.loads(js.read_text())
    assert data["matmul"]["float32"]["size"] == 128 and data["eval_applies_per_call"] == 1
    (p,) = data["presets"]
    assert p["selfplay"] is None and p["train"] is None and p["iteration"] is None
    assert p["peak"]["source"] == "--peak-tflops"
    assert [e["batch"] for e in p["eval"]] == [2, 4]
    for e in p["eval"]:
        assert e["mfu"] == pytest.approx(e["flops_per_s"] / 1e9)
        assert e["flops_per_s"] == pytest.approx(e["model_flops_per_position"]
                                                 * e["positions_per_s"])
    assert p["mfu"] == pytest.approx(max(e["mfu"] for e in p["eval"]))
    assert p["config"]["selfplay"]["games"] == 2


def zeros_of(shapes):
    """Zeros of a tree of `jax.ShapeDtypeStruct`s, on their shardings where given: NumPy's
    put on the device (no compile, unlike `jnp.zeros` and `jnp.asarray`), but for PRNG key
    arrays."""
    def zeros(s):
        if jnp.issubdtype(s.dtype, jax.dtypes.extended):
            return jnp.zeros(s.shape, s.dtype)
        return jax.device_put(np.zeros(s.shape, s.dtype), s.sharding)

    return jax.tree.map(zeros, shapes)


class TracedAlphaZero(bt.AlphaZero):
    """The trainer with `init` traced, not compiled: zeros of its fresh state's shapes on
    its shardings (the measurements only trace what they are given)."""

    def init(self, seed=None):
        return zeros_of(jax.eval_shape(self._jitted_fresh, jax.random.key(0)))


def trace_only(jitted, args, repeats, thread=None, max_seconds=None, first=None):
    """`timing.time_jitted` without XLA: traces `jitted` on `args` (shapes only), hands on
    zeros of its output, and reports 1 s of compile and 0.5 s per call (the warm-up alone,
    0 timed calls, under a `max_seconds` below 1 s)."""
    out = zeros_of(jax.eval_shape(jitted, *args))
    if first is not None:
        first.append(out)
    if thread is not None:
        thread(out, args)
    return 1.0, 0.5, 0.5, 0 if max_seconds is not None and max_seconds < 1 else repeats


@pytest.mark.slow
def test_every_measurement_traces_against_the_package(monkeypatch):
    monkeypatch.setattr(bt, "time_jitted", trace_only)
    monkeypatch.setattr(bt, "AlphaZero", TracedAlphaZero)
    lines, ticks = [], []
    measure = ("selfplay", "train", "iteration", "selfplay_loops")
    out = bt.run_benchmark(["test"], assignments=TINY, repeats=1, matmul_size=128,
                           measure=measure, selfplay_batches=(4, 2), log=lines.append,
                           tick=ticks.append)
    (r,) = out["presets"]
    # the progress bar's total: matmul, self-play, 2 train, iteration, 2 x 2 loop rows
    assert len(ticks) == 1 + 1 + 2 + 1 + 4 == bt.count_measurements(
        bt.preset_configs(["test"], TINY), measure, (), (4, 2))
    assert (r.selfplay.work, r.train.work, r.train_step.work, r.iteration.work) == (4, 8, 8, 4)
    assert r.simulations_per_call == 8 and r.unroll == 1 and not r.eval
    # matmul heading and rate, preset heading, 4 measurements, 2 batches x 2 loops
    assert len(lines) == 2 + 1 + 4 + 4
    assert [(row.batch, row.loop) for row in r.loops] == [
        (2, "gomoku_jax"), (2, "mctx"), (4, "gomoku_jax"), (4, "mctx")]
    assert r.loops[0].result is r.selfplay  # the preset's own batch and loop: reused
    assert [row.result.work for row in r.loops] == [4, 4, 8, 8]
    # Made-up CPU times: our loop at B=4 twice as fast per CPU-second as mctx's.
    r.loops[2].result = dataclasses.replace(r.loops[2].result, cpu_s=0.25)

    report = bt.render_report(out, 1)
    assert "| preset | device | net | B x T x S | K x batch |" in report
    row = next(line for line in report.splitlines() if line.startswith("| test |"))
    assert "| 2 x 2 x 2 | 1 x 8 | 1/1/1 | 8 | 8 | 16 | 16 | 16 | 16 |" in row
    assert "- test: self-play runs the net at" in report and "one step without a loop" in report
    assert "## Network evaluation" not in report
    assert ("| preset | batch | loop | compile s | ms/call | positions/s | positions/CPU-s | "
            "sims/CPU-s | vs mctx loop (CPU) | note |") in report
    assert "| test | 2 | gomoku_jax | 1.0 | 500 | 8 | 8 | 16 | 1.00x |  |" in report
    assert "| test | 2 | mctx | 1.0 | 500 | 8 | 8 | 16 | 1.00x |  |" in report
    assert "| test | 4 | gomoku_jax | 1.0 | 500 | 16 | 32 | 64 | 2.00x |  |" in report
    assert "| test | 4 | mctx | 1.0 | 500 | 16 | 16 | 32 | 1.00x |  |" in report

    (p,) = json.loads(json.dumps(bt.to_json(out)))["presets"]
    assert p["selfplay"]["positions_per_call"] == 4 and p["selfplay"]["simulations_per_s"] == 16
    assert p["train"]["samples_per_s"] == 16
    assert p["train_one_step_no_loop"]["samples_per_call"] == 8
    assert p["iteration"]["positions_per_s"] == 8 and not p["iteration_skipped"]
    assert p["mfu"] is None and p["eval"] == []
    loops = p["selfplay_loops"]
    assert [(x["batch"], x["loop"]) for x in loops] == [
        (2, "gomoku_jax"), (2, "mctx"), (4, "gomoku_jax"), (4, "mctx")]
    assert [x["vs_mctx_cpu"] for x in loops] == [1.0, 1.0, 2.0, 1.0]
    assert loops[2]["positions_per_call"] == 8 and loops[2]["simulations_per_call"] == 16
    assert loops[2]["positions_per_cpu_s"] == 32 and loops[2]["simulations_per_cpu_s"] == 64
    assert loops[3]["simulations_per_s"] == 32 and not any(x["skipped"] for x in loops)


def test_loop_comparison_skips_the_batches_above_one_over_budget(monkeypatch):
    monkeypatch.setattr(bt, "time_jitted", trace_only)
    monkeypatch.setattr(bt, "AlphaZero", TracedAlphaZero)
    out = bt.run_benchmark(["test"], assignments=TINY, repeats=2, matmul_size=64,
                           max_seconds=0.5, measure=("selfplay_loops",),
                           selfplay_batches=(2, 4), loops=("mctx",), log=lambda s: None)
    (r,) = out["presets"]
    first, second = r.loops
    assert first.result.note == "one call (the warm-up) over --max-seconds"
    assert second.result is None and second.skipped.startswith(
        "skipped: B=2 mctx already over --max-seconds 0.5")
    row = next(line for line in bt.render_report(out, 2).splitlines()
               if line.startswith("| test | 4 | mctx |"))
    assert "| - | - | - | - | - | - | skipped: B=2 mctx" in row
    (p,) = bt.to_json(out)["presets"]
    assert p["selfplay_loops"][1] == {"batch": 4, "loop": "mctx", "skipped": second.skipped,
                                      "simulations_per_call": 16, "vs_mctx_cpu": None}


@pytest.mark.parametrize("argv", [["--presets", "nope"], ["--measure", "sgd"],
                                  ["--repeats", "0"], ["--set", "selfplay.games=0"],
                                  ["--loops", "gomoku_jax,nope"],
                                  ["--selfplay-batches", "64,0"]])
def test_bad_flags_exit_with_a_message(argv):
    with pytest.raises(SystemExit, match="error"):
        bt.main(bt.build_parser().parse_args(argv + ["--matmul-size", "64"]))
