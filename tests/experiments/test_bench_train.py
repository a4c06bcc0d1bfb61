"""experiments/bench_train.py: the MFU reference it picks, the network evaluation run end to
end through the command line, and every other measurement traced against the package with
the tables and JSON they feed. No timed asserts.

Compiling self-play, SGD and a whole iteration takes minutes on a 2-core CPU, so
`test_every_measurement_traces_against_the_package` swaps the script's timer for one that
traces each function (every call into the package is checked: signatures, shapes,
shardings) without compiling it, and reports made-up times."""

import json

import jax
import jax.numpy as jnp
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


def trace_only(jitted, args, repeats, thread=None, max_seconds=None, first=None):
    """`timing.time_jitted` without XLA: traces `jitted` on `args` (shapes only), hands on
    zeros of its output, and reports 1 s of compile and 0.5 s per call."""
    out = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), jax.eval_shape(jitted, *args))
    if first is not None:
        first.append(out)
    if thread is not None:
        thread(out, args)
    return 1.0, 0.5, 0.5, repeats


def test_every_measurement_traces_against_the_package(monkeypatch):
    monkeypatch.setattr(bt, "time_jitted", trace_only)
    lines = []
    out = bt.run_benchmark(["test"], assignments=TINY, repeats=1, matmul_size=128,
                           measure=("selfplay", "train", "iteration"), log=lines.append)
    (r,) = out["presets"]
    assert (r.selfplay.work, r.train.work, r.train_step.work, r.iteration.work) == (4, 8, 8, 4)
    assert r.simulations_per_call == 8 and r.unroll == 1 and not r.eval
    assert len(lines) == 2 + 1 + 4  # matmul heading and rate, preset heading, 4 measurements

    report = bt.render_report(out, 1)
    assert "| preset | device | net | B x T x S | K x batch |" in report
    row = next(line for line in report.splitlines() if line.startswith("| test |"))
    assert "| 2 x 2 x 2 | 1 x 8 | 1/1/1 | 8 | 8 | 16 | 16 | 16 | 16 |" in row
    assert "- test: self-play runs the net at" in report and "one step without a loop" in report
    assert "## Network evaluation" not in report

    (p,) = json.loads(json.dumps(bt.to_json(out)))["presets"]
    assert p["selfplay"]["positions_per_call"] == 4 and p["selfplay"]["simulations_per_s"] == 16
    assert p["train"]["samples_per_s"] == 16
    assert p["train_one_step_no_loop"]["samples_per_call"] == 8
    assert p["iteration"]["positions_per_s"] == 8 and not p["iteration_skipped"]
    assert p["mfu"] is None and p["eval"] == []


@pytest.mark.parametrize("argv", [["--presets", "nope"], ["--measure", "sgd"],
                                  ["--repeats", "0"], ["--set", "selfplay.games=0"]])
def test_bad_flags_exit_with_a_message(argv):
    with pytest.raises(SystemExit, match="error"):
        bt.main(bt.build_parser().parse_args(argv + ["--matmul-size", "64"]))
