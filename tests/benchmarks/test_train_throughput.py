"""The training benchmark: peak look-up, budget shrinking, and one end-to-end run on the tiny
test preset whose tables and JSON hold together (no timed asserts)."""

import json

import jax
import jax.numpy as jnp
import pytest

from gomoku_jax.benchmarks import timing, train_throughput as tt
from gomoku_jax.train.alphazero import make_model
from gomoku_jax.train.config import PRESETS

TINY_KNOBS = dict(games=2, moves=2, simulations=2, batch_size=8, sgd_steps=1)


def test_spec_peaks_by_device_kind_and_dtype():
    assert tt.spec_peak("NVIDIA H100 80GB HBM3", "bfloat16") == pytest.approx(989e12)
    assert tt.spec_peak("NVIDIA H100 80GB HBM3", "float32") == pytest.approx(67e12)
    assert tt.spec_peak("NVIDIA H100 PCIe", "bfloat16") == pytest.approx(756e12)
    assert tt.spec_peak("NVIDIA H200", "bfloat16") == pytest.approx(989e12)
    assert tt.spec_peak("NVIDIA A100-SXM4-80GB", "float32") == pytest.approx(19.5e12)
    assert tt.spec_peak("NVIDIA L40S", "bfloat16") == pytest.approx(362e12)
    assert tt.spec_peak("TPU v4", "float32") is None
    assert tt.spec_peak("cpu", "float32") is None
    matmul = {"float32": {"flops_per_s": 5e10, "size": 256}}
    cpu = tt.choose_peak("cpu", "float32", matmul, None)
    assert cpu.flops_per_s == 5e10 and cpu.source.startswith("measured matmul peak")
    assert "measured matmul peak" in cpu.label()
    both = {"float32": {"flops_per_s": 5e10, "size": 256},
            "bfloat16": {"flops_per_s": 3e10, "size": 256}}
    assert tt.measured_rate(both, "bfloat16") == (5e10, "float32")  # the faster of the two
    assert tt.choose_peak("cpu", "bfloat16", both, None).dtype == "float32"
    gpu = tt.choose_peak("NVIDIA H100 80GB HBM3", "bfloat16", matmul, None)
    assert gpu.source == "vendor spec sheet"
    given = tt.choose_peak("NVIDIA H100 80GB HBM3", "bfloat16", matmul, 100.0)
    assert given.flops_per_s == pytest.approx(1e14) and given.source == "--peak-tflops"


def test_shrink_to_budget_halves_free_knobs_down_to_the_floors():
    config = PRESETS["gomoku15"]
    fpp = float(make_model(config).flops_per_position())
    rate = 5e10  # a CPU's matmul rate
    shrunk, changed, est = tt.shrink_to_budget(config, fpp, rate, 4, 600.0,
                                               locked=["moves"])
    assert changed and "moves" not in changed and est <= 600.0
    assert shrunk.selfplay.moves == config.selfplay.moves
    for knob, (old, new) in changed.items():
        assert old == tt.knob_value(config, knob) and new == tt.knob_value(shrunk, knob)
        assert tt.KNOBS[knob][1] <= new < old
    # Nothing fits a zero budget: every free knob ends at its floor, the estimate stays over.
    floor, changed, est = tt.shrink_to_budget(config, fpp, rate, 4, 1e-9)
    assert est > 1e-9
    assert all(tt.knob_value(floor, k) == tt.KNOBS[k][1] for k in tt.KNOBS)
    # Only what is measured counts: self-play alone leaves the training knobs alone, and
    # the network evaluation alone changes nothing.
    sp_only, changed, _ = tt.shrink_to_budget(config, fpp, rate, 4, 600.0,
                                              measure=("selfplay",))
    assert changed and set(changed) <= set(tt.SELFPLAY_KNOBS)
    assert sp_only.optim == config.optim
    _, changed, est = tt.shrink_to_budget(config, fpp, rate, 4, 1e-9, measure=("eval",))
    assert not changed and est == 0.0
    # A budget it already fits changes nothing.
    same, changed, _ = tt.shrink_to_budget(config, fpp, 1e30, 4, 120.0)
    assert same == config and not changed


def test_cpu_loop_penalty_follows_the_trainers_unroll():
    config = PRESETS["quick"]
    k = config.optim.sgd_steps
    assert tt.sgd_unroll(config, "cpu") == k and tt.sgd_unroll(config, "gpu") == 1
    assert tt.loop_penalty(config, "cpu") == 1.0 == tt.loop_penalty(config, "gpu")
    looped = tt.override(config, ["optim.unroll=1"])
    assert tt.loop_penalty(looped, "cpu") == tt.CPU_LOOP_PENALTY
    fpp, rate = 1e7, 1e11
    assert tt.estimate_seconds(looped, fpp, rate, "cpu")["train"] == pytest.approx(
        tt.CPU_LOOP_PENALTY * tt.estimate_seconds(config, fpp, rate, "cpu")["train"])
    assert tt.k_label(8, 256, 8) == "8 x 256 unrolled"
    assert tt.k_label(8, 256, 2) == "8 x 256 unroll 2" and tt.k_label(8, 256, 1) == "8 x 256"


def test_tiny_run_end_to_end_tables_and_json():
    lines = []
    out = tt.run_benchmark(["test"], knobs=TINY_KNOBS, eval_batches=[2, 4], repeats=1,
                           max_seconds=1e9, matmul_size=128, log=lines.append)
    (r,) = out["presets"]
    assert not r.skipped and not r.shrunk and r.config.selfplay.games == 2
    assert r.selfplay.work == 2 * 2 and r.iteration.work == 2 * 2
    assert r.train.work == 8 * 1 and r.train_step.work == 8
    for m in (r.selfplay, r.train, r.train_step, r.iteration):
        assert m.compile_s > 0 and m.wall_s > 0 and m.per_wall_s > 0 and m.per_cpu_s > 0
        assert m.note == ""  # no budget cut
    assert r.simulations_per_call == 2 * 2 * 2
    assert r.selfplay_net_flops_per_s == pytest.approx(
        2 * 2 * 3 * r.fpp / r.selfplay.wall_s)
    assert [e.batch for e in r.eval] == [2, 4]
    for e in r.eval:
        assert e.result.work == e.batch * e.inner and e.flops_per_s > 0
        assert e.flops_per_s == pytest.approx(e.model_flops * e.result.per_wall_s)
        # XLA counts only in-board taps of the padded convs but adds BatchNorm and ReLU.
        assert e.xla_flops is None or 0.5 < e.model_flops / e.xla_flops < 2.0
    assert r.peak.source.startswith("measured matmul peak") and r.peak.flops_per_s > 0
    best = r.best_eval()
    assert best.flops_per_s == max(e.flops_per_s for e in r.eval)

    report = tt.render_report(out, 1)
    assert "| preset | device | net | B x T x S | K x batch |" in report
    assert "| test | cpu | 2x16 f32 | 2 x 2 x 2 | 1 x 8 |" in report
    assert "measured matmul peak (128^3)" in report and "1 step, no loop" in report
    assert "| test | 2x16 f32 | 2 |" in report and "| test | 2x16 f32 | 4 |" in report
    data = json.loads(json.dumps(tt.to_json(out)))
    (p,) = data["presets"]
    assert p["selfplay"]["positions_per_call"] == 4
    assert p["selfplay"]["simulations_per_s"] == pytest.approx(
        2 * p["selfplay"]["positions_per_s"])
    assert p["train"]["samples_per_s"] == pytest.approx(8 / p["train"]["wall_s"])
    assert p["train_one_step_no_loop"]["samples_per_call"] == 8
    assert 0 < p["mfu"] and p["eval"][0]["mfu"] > 0
    assert p["config"]["selfplay"]["num_simulations"] == 2


def test_time_jitted_cuts_repeats_to_the_budget():
    f = jax.jit(lambda x: x @ x)
    x = jnp.ones((64, 64))
    first = []
    compile_s, wall, cpu, timed = timing.time_jitted(f, (x,), 3, first=first)
    assert timed == 3 and wall > 0 and compile_s > 0 and len(first) == 1
    *_, timed = timing.time_jitted(f, (x,), 3, max_seconds=1e-9)
    assert timed == 0  # the warm-up alone was over: it is the measurement
    assert tt._timed_note(0, 3).startswith("one call") and tt._timed_note(3, 3) == ""


def test_over_budget_preset_is_skipped_with_the_reason():
    out = tt.run_benchmark(["gomoku15"], repeats=1, max_seconds=1e-6, matmul_size=128,
                           log=lambda s: None)
    (r,) = out["presets"]
    assert "skipped" in r.skipped and "--force" in r.skipped
    assert r.shrunk and r.selfplay is None and r.train is None and r.iteration is None
    # The network evaluation still runs, under its own estimate: here over budget too.
    assert [e.batch for e in r.eval] == list(tt.DEFAULT_EVAL_BATCHES)
    assert all(e.result is None and e.skipped.startswith("skipped") for e in r.eval)
    row = [line for line in tt.render_main_table([r]).splitlines()
           if line.startswith("| gomoku15")][0]
    assert "shrunk to fit" in row and "skipped" in row


def test_cli_eval_only_writes_json(tmp_path, capsys):
    js = tmp_path / "t.json"
    args = tt.build_parser().parse_args(
        ["--presets", "test", "--measure", "eval", "--eval-batch-sizes", "2",
         "--repeats", "1", "--matmul-size", "128", "--peak-tflops", "0.001",
         "--json", str(js)])
    assert tt.main(args) == 0
    assert "## Network evaluation" in capsys.readouterr().out
    (p,) = json.loads(js.read_text())["presets"]
    assert p["peak"]["source"] == "--peak-tflops" and p["selfplay"] is None
    assert p["eval"][0]["mfu"] == pytest.approx(p["eval"][0]["flops_per_s"] / 1e9)


@pytest.mark.parametrize("argv", [["--presets", "nope"], ["--measure", "sgd"],
                                  ["--games", "0"], ["--repeats", "0"]])
def test_bad_flags_exit_with_a_message(argv):
    with pytest.raises(SystemExit, match="error"):
        tt.main(tt.build_parser().parse_args(argv))
