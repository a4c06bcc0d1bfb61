"""Training throughput per preset: self-play, SGD, network evaluation (FLOP/s, MFU) and one
whole AlphaZero iteration, each jitted, compile time apart, median of `--repeats` calls.

    python experiments/bench_train.py --presets quick --out train.md
    python experiments/bench_train.py --presets test --set selfplay.games=2 --measure eval
    python experiments/bench_train.py --presets quick --measure selfplay_loops \
        --selfplay-batches 64,256,1024 --repeats 2

For every training preset (`gomoku_jax.train.presets_of("alphazero")`, after the `--set` overrides):
  self-play   `selfplay.play` with the preset's network (`AlphaZero.evaluator`) inside its
              search algorithm, B games x T moves x S simulations, the boards sharded as in
              the trainer. positions = B x T, simulations = B x T x S.
  train       K `learner.sgd_step`s in one `lax.scan` (`AlphaZero.sgd_steps`), each on
              `AlphaZero.training_batch` (uniform replay sample + the game's synthetic
              examples + symmetry augmentation), from a buffer filled with the self-play
              call's samples, unrolled as the trainer does it (`AlphaZero.sgd_unroll`,
              `optim.unroll`: 1 by default). samples = K x batch size.
              Beside it, the reference: the same step jitted alone ("1 step, no loop").
              XLA:CPU runs its own convolution gradients inside a loop body 10-80x slower
              than outside one (jax-ml/jax#12868); the network's convs have gradients written
              as forward convs (`nets/conv.py`) that avoid it, and the pair shows what is
              left of the loop's cost (`--set optim.unroll=0` unrolls all K steps).
  selfplay_loops
              self-play as above, per `--selfplay-batches` B (default: the preset's own
              `selfplay.games`) and per search loop of `--loops` (`search.loop`: "gomoku_jax",
              our `search/tree_loop.py`, and "mctx", `mctx.search`; default both): the preset with
              `selfplay.games=B` and `search.loop=L`, one table row each, with the row's
              positions per CPU-second over the mctx row's of the same preset and batch
              ("vs mctx loop (CPU)", > 1: faster than mctx). The row of the preset's own batch
              and loop is the self-play measurement above when that one was taken.
  iteration   one `AlphaZero.iteration` (self-play + buffer + K steps), as the trainer
              compiles it (shardings, donation): the end-to-end rate.
  eval        `model.apply` (inference) alone on random observations at each of
              `--eval-batch-sizes`: FLOP/s = batch x `model.flops_per_position()` / seconds,
              with XLA's own count (`compiled.cost_analysis()["flops"]`) beside the model's.
MFU = eval FLOP/s / the device's peak for the net's dtype: the vendor spec sheet figure
for known accelerators (dense, no sparsity), or `--peak-tflops`; otherwise (CPUs) the rate
of a large matmul measured in the same run ("measured matmul peak": the fastest of a few
calls, in the net's dtype or float32, whichever is faster). The matmul is measured and
shown on every device. It is a reference, not a ceiling: XLA:CPU's convs can beat its
matmul, and a shared machine's load changes during a run.

Time: `--max-seconds` bounds each measurement after its compile: once the warm-up call
has been timed, the repeats are cut to fit (noted in the table), the iteration is skipped
when the preset's measured self-play + train calls already take longer than it, and the loop
comparison skips the batches above one whose repeats had to be cut (noted).
The default presets are "quick" on CPU and "quick,gomoku15" elsewhere (gomoku15 is a GPU
preset: on a CPU one self-play call takes hours). Rates are per second of wall time and
per second of process CPU time (the machines are shared; CPU time is the steadier number).
A progress bar on stderr counts the measurements (a skipped one counts as done; not with
`--no-progress` or when stderr is not a terminal).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from typing import Any, Callable, Optional, Sequence

import jax
import jax.numpy as jnp

from gomoku_jax import progress
from gomoku_jax.benchmarks.timing import (
    Measurement,
    describe_machine,
    fmt_rate,
    parse_int_list,
    pin_cpus,
    time_jitted,
)
from gomoku_jax.markdown import table as markdown_table
from gomoku_jax.markdown import write_report
from gomoku_jax.search.base import LOOPS
from gomoku_jax.train import replay
from gomoku_jax.train.algorithms import presets_of
from gomoku_jax.train.alphazero import learner, selfplay
from gomoku_jax.train.alphazero.config import AlphaZeroConfig
from gomoku_jax.train.alphazero.trainer import AlphaZero
from gomoku_jax.train.config import override

PRESETS = presets_of("alphazero")  # AlphaZero's presets by name
DEFAULT_EVAL_BATCHES = (64, 256, 1024)
DEFAULT_MAX_SECONDS = 300.0
MATMUL_CALLS = 5
MEASUREMENTS = ("selfplay", "train", "iteration", "eval", "selfplay_loops")
TRAIN_PASSES = 3  # forward + backward of one sample, in forward passes

# Peak dense throughput in TFLOP/s by device kind and compute dtype. Source: the vendors'
# spec sheets (NVIDIA H100 / H200 / A100 / L4 / L40S data sheets, Google Cloud TPU system
# pages), dense figures (the sparsity numbers halved). float32 is plain FP32, not TF32:
# JAX's default matmul precision lets XLA use TF32 for float32 on Ampere and later, so a
# float32 net there can show an MFU above 100 %. Matched in order, first substring wins.
SPEC_PEAK_TFLOPS: tuple[tuple[str, dict[str, float]], ...] = (
    ("H100 PCIe", {"bfloat16": 756.0, "float32": 51.0}),
    ("H100 NVL", {"bfloat16": 835.0, "float32": 60.0}),
    ("H100", {"bfloat16": 989.0, "float32": 67.0}),  # SXM5
    ("H200 NVL", {"bfloat16": 835.0, "float32": 60.0}),
    ("H200", {"bfloat16": 989.0, "float32": 67.0}),  # SXM, same compute as H100 SXM
    ("A100", {"bfloat16": 312.0, "float32": 19.5}),
    ("L40S", {"bfloat16": 362.0, "float32": 91.6}),
    ("L4", {"bfloat16": 121.0, "float32": 30.3}),
    ("TPU v4", {"bfloat16": 275.0}),
    ("TPU v5 lite", {"bfloat16": 197.0}),
    ("TPU v5e", {"bfloat16": 197.0}),
    ("TPU v5p", {"bfloat16": 459.0}),
    ("TPU v6", {"bfloat16": 918.0}),  # Trillium (v6e, "TPU v6 lite")
)


# ----------------------------------------------------------------------------- peaks

def spec_peak(device_kind: str, dtype: str) -> Optional[float]:
    """Vendor peak FLOP/s of one device of this kind for `dtype`, or None if unknown."""
    for name, peaks in SPEC_PEAK_TFLOPS:
        if name.lower() in device_kind.lower():
            tflops = peaks.get(dtype)
            return None if tflops is None else tflops * 1e12
    return None


def measure_matmul(dtype: str, size: int, calls: int = MATMUL_CALLS) -> dict:
    """FLOP/s of a size x size @ size x size matmul in `dtype` on the default device: the
    fastest of `calls` timed calls after a warm-up (a peak is a best case; on a shared
    machine the median drifts with the load)."""
    dt = jnp.dtype(dtype)
    k1, k2 = jax.random.split(jax.random.key(0))
    a = jax.random.normal(k1, (size, size), dt)
    b = jax.random.normal(k2, (size, size), dt)
    compiled = jax.jit(jnp.matmul).lower(a, b).compile()
    jax.block_until_ready(compiled(a, b))
    walls = []
    for _ in range(calls):
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(a, b))
        walls.append(time.perf_counter() - t0)
    return {"dtype": dtype, "size": size, "calls": calls, "best_wall_s": min(walls),
            "median_wall_s": statistics.median(walls),
            "flops_per_s": 2.0 * size ** 3 / min(walls)}


@dataclasses.dataclass
class Peak:
    """The reference an MFU is taken against."""

    flops_per_s: float
    source: str  # "vendor spec sheet", "measured matmul peak (N^3)", "--peak-tflops"
    dtype: str

    def label(self) -> str:
        return f"{fmt_flops(self.flops_per_s)} {_short_dtype(self.dtype)}, {self.source}"


def measured_rate(matmul: dict[str, dict], dtype: str) -> tuple[float, str]:
    """(FLOP/s, dtype) of the measured matmul reference for a net computing in `dtype`:
    that dtype's matmul, or float32's where it is faster (XLA:CPU, for one, runs bfloat16
    slower than float32; a bfloat16 net can always be run in float32)."""
    best = max((d for d in (dtype, "float32") if d in matmul),
               key=lambda d: matmul[d]["flops_per_s"])
    return matmul[best]["flops_per_s"], best


def choose_peak(device_kind: str, dtype: str, matmul: dict[str, dict],
                override_tflops: Optional[float]) -> Peak:
    """The MFU reference: `--peak-tflops`, else the vendor figure for this device kind
    and dtype, else the measured matmul (`measured_rate`)."""
    if override_tflops is not None:
        return Peak(override_tflops * 1e12, "--peak-tflops", dtype)
    spec = spec_peak(device_kind, dtype)
    if spec is not None:
        return Peak(spec, "vendor spec sheet", dtype)
    rate, used = measured_rate(matmul, dtype)
    return Peak(rate, f"measured matmul peak ({matmul[used]['size']}^3)", used)


def xla_flops(compiled) -> Optional[float]:
    """XLA's flop count of a compiled computation (None where the backend gives none)."""
    try:
        cost = compiled.cost_analysis()
    except Exception:  # not every backend implements it
        return None
    if isinstance(cost, (list, tuple)):  # older jax: one dict per computation
        cost = cost[0] if cost else None
    if not cost or "flops" not in cost:
        return None
    return float(cost["flops"])


# ----------------------------------------------------------------------------- labels

def k_label(steps: int, batch: int, unroll: int) -> str:
    """"K x batch", and how the scan is unrolled when it is."""
    loop = "" if unroll <= 1 else " unrolled" if unroll >= steps else f" unroll {unroll}"
    return f"{steps} x {batch}{loop}"


def net_label(config: AlphaZeroConfig) -> str:
    n = config.net
    return f"{n.blocks}x{n.channels} {_short_dtype(n.dtype)}"


def _short_dtype(dtype: str) -> str:
    return {"float32": "f32", "bfloat16": "bf16"}.get(dtype, dtype)


def fmt_flops(x: float) -> str:
    for unit, scale in (("PFLOP/s", 1e15), ("TFLOP/s", 1e12), ("GFLOP/s", 1e9),
                        ("MFLOP/s", 1e6)):
        if x >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x:.3g} FLOP/s"


def _ms(seconds: float) -> str:
    ms = 1e3 * seconds
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.1f}" if ms >= 1 else f"{ms:.2f}"


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %" if x >= 0.001 else f"{100 * x:.3f} %"


# ----------------------------------------------------------------------------- results

@dataclasses.dataclass
class EvalRow:
    batch: int
    inner: int  # applies per timed call (a lax.scan over distinct observations)
    result: Measurement
    model_flops: float  # per position, `flops_per_position`
    xla_flops: Optional[float] = None  # per position, XLA's cost analysis

    @property
    def flops_per_s(self) -> float:
        return self.model_flops * self.result.per_wall_s

    def as_dict(self, peak: Peak, matmul_rate: float) -> dict:
        m = self.result
        return {"batch": self.batch, "applies_per_call": self.inner,
                "model_flops_per_position": self.model_flops,
                "xla_flops_per_position": self.xla_flops, "compile_s": m.compile_s,
                "wall_s": m.wall_s, "cpu_s": m.cpu_s, "note": m.note,
                "positions_per_s": m.per_wall_s, "positions_per_cpu_s": m.per_cpu_s,
                "flops_per_s": self.flops_per_s, "mfu": self.flops_per_s / peak.flops_per_s,
                "fraction_of_matmul": self.flops_per_s / matmul_rate}


def _meas_dict(m: Optional[Measurement], unit: str) -> Optional[dict]:
    if m is None:
        return None
    return {"compile_s": m.compile_s, "wall_s": m.wall_s, "cpu_s": m.cpu_s, "note": m.note,
            f"{unit}_per_call": m.work, f"{unit}_per_s": m.per_wall_s,
            f"{unit}_per_cpu_s": m.per_cpu_s}


@dataclasses.dataclass
class LoopRow:
    """Self-play of a preset with `selfplay.games = batch` and `search.loop = loop`;
    `result` None when it was skipped (`skipped` says why)."""

    batch: int
    loop: str
    simulations_per_call: int  # B x T x S
    result: Optional[Measurement] = None
    skipped: str = ""

    def as_dict(self, vs_mctx: Optional[float]) -> dict:
        d = {"batch": self.batch, "loop": self.loop, "skipped": self.skipped,
             "simulations_per_call": self.simulations_per_call, "vs_mctx_cpu": vs_mctx}
        m = self.result
        if m is not None:
            d.update(_meas_dict(m, "positions"),
                     simulations_per_s=self.simulations_per_call / m.wall_s,
                     simulations_per_cpu_s=self.simulations_per_call / m.cpu_s)
        return d


@dataclasses.dataclass
class PresetResult:
    """Everything measured for one preset (None: not measured)."""

    name: str
    config: AlphaZeroConfig
    device: str
    fpp: float  # model FLOPs per position (forward)
    evaluations_per_node: int  # network passes per searched node
    unroll: int  # the SGD scan's unroll (`AlphaZero.sgd_unroll`)
    peak: Peak
    matmul_rate: float
    selfplay: Optional[Measurement] = None
    train: Optional[Measurement] = None  # K steps in a lax.scan, as in the iteration
    train_step: Optional[Measurement] = None  # reference: one jitted step, no loop
    iteration: Optional[Measurement] = None
    iteration_skipped: str = ""
    eval: list[EvalRow] = dataclasses.field(default_factory=list)
    loops: list[LoopRow] = dataclasses.field(default_factory=list)

    @property
    def simulations_per_call(self) -> int:
        sp = self.config.selfplay
        return sp.games * sp.moves * sp.num_simulations

    @property
    def selfplay_net_flops_per_s(self) -> float:
        """FLOP/s of the network inside self-play: B x T x (S + 1) nodes per call, each
        `evaluations_per_node` passes."""
        if self.selfplay is None:
            return 0.0
        sp = self.config.selfplay
        passes = sp.games * sp.moves * (sp.num_simulations + 1) * self.evaluations_per_node
        return passes * self.fpp / self.selfplay.wall_s

    @property
    def train_net_flops_per_s(self) -> float:
        """FLOP/s of the network inside training (TRAIN_PASSES passes per sample)."""
        return TRAIN_PASSES * self.fpp * self.train.per_wall_s if self.train else 0.0

    def best_eval(self) -> Optional[EvalRow]:
        return max(self.eval, key=lambda r: r.flops_per_s) if self.eval else None

    def vs_mctx(self, row: LoopRow) -> Optional[float]:
        """`row`'s positions per CPU-second over those of the mctx loop at its batch (None
        where either was not measured)."""
        ref = next((r for r in self.loops if r.batch == row.batch and r.loop == "mctx"
                    and r.result is not None), None)
        if row.result is None or ref is None:
            return None
        return row.result.per_cpu_s / ref.result.per_cpu_s

    def as_dict(self) -> dict:
        sp = _meas_dict(self.selfplay, "positions")
        if sp is not None:
            sp.update(simulations_per_call=self.simulations_per_call,
                      simulations_per_s=self.simulations_per_call / self.selfplay.wall_s,
                      simulations_per_cpu_s=self.simulations_per_call / self.selfplay.cpu_s,
                      net_flops_per_s=self.selfplay_net_flops_per_s)
        tr = _meas_dict(self.train, "samples")
        if tr is not None:
            tr["net_flops_per_s"] = self.train_net_flops_per_s
        best = self.best_eval()
        return {
            "preset": self.name, "device": self.device, "net": net_label(self.config),
            "flops_per_position": self.fpp, "config": self.config.to_dict(),
            "sgd_unroll": self.unroll, "peak": dataclasses.asdict(self.peak),
            "matmul_flops_per_s": self.matmul_rate,
            "selfplay": sp, "train": tr,
            "train_one_step_no_loop": _meas_dict(self.train_step, "samples"),
            "iteration": _meas_dict(self.iteration, "positions"),
            "iteration_skipped": self.iteration_skipped,
            "eval": [r.as_dict(self.peak, self.matmul_rate) for r in self.eval],
            "best_eval_flops_per_s": best.flops_per_s if best else None,
            "mfu": best.flops_per_s / self.peak.flops_per_s if best else None,
            "selfplay_loops": [r.as_dict(self.vs_mctx(r)) for r in self.loops],
        }


# ----------------------------------------------------------------------------- measurements

def _measurement(name: str, batch: int, steps: int, timing: tuple, repeats: int
                 ) -> Measurement:
    compile_s, wall, cpu, timed = timing
    note = ("" if timed == repeats else "one call (the warm-up) over --max-seconds"
            if timed == 0 else f"median of {timed} (--max-seconds)")
    return Measurement(name, "", batch, steps, compile_s, wall, cpu, note)


def measure_selfplay(trainer: AlphaZero, state, repeats: int, seed: int,
                     max_seconds: float) -> tuple[Measurement, Any]:
    """Time `selfplay.play` as the iteration calls it, from the fresh games of `state`
    (work = B x T positions); also returns the samples of the warm-up call."""
    env, cfg = trainer.env, trainer.config
    sp = cfg.selfplay

    def run(variables, games, pending, key):
        return selfplay.play(env, cfg.search, trainer.evaluator, sp.num_simulations, sp.moves,
                             variables, games, pending, key)

    def thread(out, args):
        variables, games, pending, key = args
        if sp.carry_games:
            games, pending = out[0], out[1]
        return variables, games, pending, jax.random.fold_in(key, 1)

    first: list = []
    args = (state.variables, state.games, state.pending, jax.random.key(seed))
    timing = time_jitted(jax.jit(run), args, repeats, thread, max_seconds, first)
    return _measurement("self-play", sp.games, sp.moves, timing, repeats), first[0][2]


def loop_variant(config: AlphaZeroConfig, batch: int, loop: str) -> AlphaZeroConfig:
    """`config` with `batch` self-play games per call, searched with the simulation loop
    `loop` (ValueError for a bad batch or loop)."""
    return override(config, [f"selfplay.games={batch}", f"search.loop={loop}"])


def measure_selfplay_loops(config: AlphaZeroConfig, batches: Sequence[int], loops: Sequence[str],
                           repeats: int, seed: int, max_seconds: float,
                           known: Optional[Measurement] = None, log=print,
                           tick: Callable[[int], None] = lambda n: None) -> list[LoopRow]:
    """Self-play (`measure_selfplay`) of `loop_variant(config, B, L)` for every batch B
    (ascending) and loop L, each from its own `AlphaZero` (the same network: same seed),
    `tick(1)` after each. `known`: the measurement of `config` itself, reused for its own
    batch and loop. Once the repeats of a batch were cut by `max_seconds`, the larger
    batches are skipped."""
    rows: list[LoopRow] = []
    over = ""
    sp = config.selfplay
    for batch in sorted(set(batches)):
        for loop in loops:
            variant = loop_variant(config, batch, loop)
            row = LoopRow(batch, loop, batch * sp.moves * sp.num_simulations, skipped=over)
            if not over:
                if known is not None and variant == config:
                    row.result = known
                else:
                    trainer = AlphaZero(variant)
                    row.result, _ = measure_selfplay(trainer, trainer.init(seed), repeats,
                                                     seed, max_seconds)
                    del trainer
                m = row.result
                _log_measurement(log, f"B={batch} {loop}", m, "positions",
                                 f"  {fmt_rate(row.simulations_per_call / m.cpu_s):>8} "
                                 f"sims/CPU-s")
            else:
                log(f"  B={batch} {loop:<{16 - len(str(batch))}} {over}")
            rows.append(row)
            tick(1)
        cut = next((r for r in rows[-len(loops):] if r.result and r.result.note), None)
        if cut and not over:
            over = (f"skipped: B={batch} {cut.loop} already over --max-seconds "
                    f"{max_seconds:g} ({cut.result.wall_s:.0f} s per call)")
    return rows


def measure_train(trainer: AlphaZero, state, buffer, repeats: int, seed: int,
                  max_seconds: float, loop: bool = True) -> Measurement:
    """Time K SGD steps in a `lax.scan` (`loop`, work = K x batch samples), or one step
    without a loop (work = batch samples)."""
    cfg = trainer.config
    steps = cfg.optim.sgd_steps if loop else 1

    def run(params, batch_stats, opt_state, buffer, key):
        if loop:
            carry, (parts, grad_norm) = trainer.sgd_steps(params, batch_stats, opt_state,
                                                          buffer, key)
            return carry, (parts.loss, grad_norm)
        new = learner.sgd_step(trainer.env, trainer.model, trainer.optimizer,
                               cfg.optim.value_weight, params, batch_stats, opt_state,
                               trainer.training_batch(buffer, key))
        return new[:3], (new[3].loss, new[4])

    def thread(out, args):
        (params, stats, opt_state), _ = out
        return params, stats, opt_state, args[3], jax.random.fold_in(args[4], 1)

    args = (state.params, state.batch_stats, state.opt_state, buffer, jax.random.key(seed))
    timing = time_jitted(jax.jit(run), args, repeats, thread, max_seconds)
    return _measurement("train" if loop else "train step", cfg.optim.batch_size, steps, timing,
                        repeats)


def measure_iteration(trainer: AlphaZero, state, repeats: int,
                      max_seconds: float) -> Measurement:
    """Time `AlphaZero.iteration` (its own shardings and donation: `state` is donated and
    each call takes the previous call's state); work = B x T positions. Network self-play
    (a bootstrap evaluator's iterations are not timed here)."""
    sp = trainer.config.selfplay
    timing = time_jitted(trainer.jitted_iteration[False], (state,), repeats,
                         lambda out, args: (out[0],), max_seconds)
    return _measurement("iteration", sp.games, sp.moves, timing, repeats)


def measure_eval(trainer: AlphaZero, variables, batch: int, inner: int, repeats: int,
                 seed: int, max_seconds: float) -> EvalRow:
    """`inner` x `batch` inference passes per timed call (a `lax.scan`, each pass on its
    own observations, reduced so none is dead code), and XLA's flop count of one."""
    model = trainer.model
    obs = jax.random.bernoulli(jax.random.key(seed), 0.2,
                               (inner, batch, *trainer.env.observation_shape))
    obs = obs.astype(jnp.float32)

    def run(variables, obs):
        def body(acc, o):
            logits, value = model.apply(variables, o)
            return acc + jnp.sum(logits[:, 0]) + jnp.sum(value), None

        return jax.lax.scan(body, jnp.float32(0), obs)[0]

    counted = xla_flops(jax.jit(model.apply).lower(variables, obs[0]).compile())
    timing = time_jitted(jax.jit(run), (variables, obs), repeats, max_seconds=max_seconds)
    return EvalRow(batch, inner, _measurement("eval", batch, inner, timing, repeats),
                   float(model.flops_per_position()),
                   counted / batch if counted is not None else None)


# ----------------------------------------------------------------------------- driver

def _log_measurement(log, label: str, m: Measurement, unit: str, extra: str = "") -> None:
    log(f"  {label:<18} compile {m.compile_s:6.1f} s  {m.wall_s:8.3f} s/call  "
        f"{fmt_rate(m.per_wall_s):>8} {unit}/s  {fmt_rate(m.per_cpu_s):>8} {unit}/CPU-s"
        f"{extra}{'  (' + m.note + ')' if m.note else ''}")


def run_preset(name: str, config: AlphaZeroConfig, matmul: dict[str, dict], *,
               eval_batches: Sequence[int], eval_inner: int, repeats: int, max_seconds: float,
               peak_tflops: Optional[float], measure: Sequence[str], seed: int = 0,
               selfplay_batches: Optional[Sequence[int]] = None,
               loops: Sequence[str] = LOOPS, log=print,
               tick: Callable[[int], None] = lambda n: None) -> PresetResult:
    """All measurements of one preset (see the module docstring), `tick(1)` after each;
    `selfplay_batches` None: the loop comparison at the preset's own batch."""
    trainer = AlphaZero(config)
    devices = trainer.mesh.devices.ravel()
    device = devices[0].device_kind if len(devices) == 1 else (
        f"{len(devices)} x {devices[0].device_kind}")
    symmetries = trainer.env.num_symmetries if config.search.symmetry == "average" else 1
    res = PresetResult(name, config, device, float(trainer.model.flops_per_position()),
                       symmetries, trainer.sgd_unroll,
                       choose_peak(devices[0].device_kind, config.net.dtype, matmul,
                                   peak_tflops),
                       measured_rate(matmul, config.net.dtype)[0])
    sp, opt = config.selfplay, config.optim
    log(f"## {name}: net {net_label(config)} ({fmt_flops(res.fpp).replace('/s', '')} per "
        f"position), B x T x S = {sp.games} x {sp.moves} x {sp.num_simulations}, "
        f"K x batch = {k_label(opt.sgd_steps, opt.batch_size, res.unroll)}")

    state = trainer.init(seed)  # the network, optimiser state and an empty buffer
    if "selfplay" in measure or "train" in measure:
        selfplay_m, samples = measure_selfplay(trainer, state, repeats, seed, max_seconds)
        if "selfplay" in measure:
            res.selfplay = selfplay_m
            _log_measurement(log, "self-play", selfplay_m, "positions",
                             f"  {fmt_rate(res.simulations_per_call / selfplay_m.wall_s):>8}"
                             f" sims/s")
            tick(1)
        if "train" in measure:
            # Every sample of the call, finished game or not: only the cost matters here.
            buffer = jax.jit(replay.add)(state.buffer, samples,
                                         jnp.ones(samples.value.shape, bool))
            res.train_step = measure_train(trainer, state, buffer, repeats, seed, max_seconds,
                                           loop=False)
            _log_measurement(log, "train, 1 step", res.train_step, "samples")
            tick(1)
            res.train = measure_train(trainer, state, buffer, repeats, seed, max_seconds)
            _log_measurement(log, f"train, {opt.sgd_steps} steps", res.train, "samples")
            tick(1)
            del buffer
        del samples
    if "selfplay_loops" in measure:
        res.loops = measure_selfplay_loops(config, selfplay_batches or [sp.games], loops,
                                           repeats, seed, max_seconds, res.selfplay, log, tick)
    if "eval" in measure:
        for b in sorted(eval_batches):
            row = measure_eval(trainer, state.variables, b, eval_inner, repeats, seed,
                               max_seconds)
            res.eval.append(row)
            log(f"  eval B={b:<11} compile {row.result.compile_s:6.1f} s  "
                f"{1e3 * row.result.wall_s / eval_inner:8.2f} ms/apply  "
                f"{fmt_flops(row.flops_per_s):>14}  "
                f"MFU {_pct(row.flops_per_s / res.peak.flops_per_s)}")
            tick(1)
    if "iteration" in measure:  # last: it takes (donates) the state
        measured = [m.wall_s for m in (res.selfplay, res.train) if m is not None]
        if len(measured) == 2 and sum(measured) > max_seconds:
            res.iteration_skipped = (f"skipped: self-play + train take {sum(measured):.0f} s "
                                     f"per call, over --max-seconds {max_seconds:g}")
            log(f"  iteration          {res.iteration_skipped}")
        else:
            res.iteration = measure_iteration(trainer, state, repeats, max_seconds)
            _log_measurement(log, "iteration", res.iteration, "positions")
        tick(1)
    return res


def run_benchmark(presets: Sequence[str], *, assignments: Sequence[str] = (),
                  eval_batches: Sequence[int] = DEFAULT_EVAL_BATCHES, eval_inner: int = 0,
                  repeats: int = 3, max_seconds: float = DEFAULT_MAX_SECONDS,
                  peak_tflops: Optional[float] = None, matmul_size: int = 0,
                  measure: Sequence[str] = MEASUREMENTS, seed: int = 0,
                  selfplay_batches: Optional[Sequence[int]] = None,
                  loops: Sequence[str] = LOOPS, log=print,
                  tick: Callable[[int], None] = lambda n: None) -> dict:
    """Measure every preset; returns {"matmul": {dtype: measurement}, "presets":
    [PresetResult], "eval_inner": applies per timed eval call}. `selfplay_batches` and
    `loops`: the loop comparison's (None: each preset's own batch). `tick(1)` after each
    measurement (`count_measurements` in all).

    Raises:
      ValueError: an unknown preset, a bad `--set` assignment, batch or loop.
    """
    configs = preset_configs(presets, assignments)
    if "selfplay_loops" in measure:  # fail before any measurement
        for config in configs.values():
            for loop in loops:
                for batch in selfplay_batches or [config.selfplay.games]:
                    loop_variant(config, batch, loop)
    on_cpu = jax.default_backend() == "cpu"
    eval_inner = eval_inner or (1 if on_cpu else 16)
    size = matmul_size or (2048 if on_cpu else 8192)
    calls = max(repeats, MATMUL_CALLS)
    log(f"## measured matmul peak ({size}^3, best of {calls})")
    matmul = {}
    for dt in sorted({"float32"} | {c.net.dtype for c in configs.values()}):
        matmul[dt] = measure_matmul(dt, size, calls)
        log(f"  {dt:<9} {fmt_flops(matmul[dt]['flops_per_s'])}")
        tick(1)
    results = [run_preset(name, cfg, matmul, eval_batches=eval_batches, eval_inner=eval_inner,
                          repeats=repeats, max_seconds=max_seconds, peak_tflops=peak_tflops,
                          measure=measure, seed=seed, selfplay_batches=selfplay_batches,
                          loops=loops, log=log, tick=tick)
               for name, cfg in configs.items()]
    return {"matmul": matmul, "presets": results, "eval_inner": eval_inner}


def preset_configs(presets: Sequence[str], assignments: Sequence[str] = ()
                   ) -> dict[str, AlphaZeroConfig]:
    """{name: the preset after the `--set` assignments}; ValueError for an unknown preset or
    a bad assignment."""
    configs = {}
    for name in presets:
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}; available: {sorted(PRESETS)}")
        configs[name] = override(PRESETS[name], assignments)
    return configs


def count_measurements(configs: dict[str, AlphaZeroConfig], measure: Sequence[str],
                       eval_batches: Sequence[int],
                       selfplay_batches: Optional[Sequence[int]] = None,
                       loops: Sequence[str] = LOOPS) -> int:
    """The measurements `run_benchmark` takes (or skips): the progress bar's total. The
    matmul per dtype; per preset self-play, train (1 step and K steps), each loop row, each
    eval batch, the iteration."""
    dtypes = len({"float32"} | {c.net.dtype for c in configs.values()})
    each = {"selfplay": 1, "train": 2, "eval": len(eval_batches), "iteration": 1}
    total = dtypes + len(configs) * sum(each.get(m, 0) for m in measure)
    if "selfplay_loops" in measure:
        total += sum(len(set(selfplay_batches or [c.selfplay.games])) * len(loops)
                     for c in configs.values())
    return total


# ----------------------------------------------------------------------------- report

def render_main_table(results: Sequence[PresetResult]) -> str:
    header = ["preset", "device", "net", "B x T x S", "K x batch", "compile s (sp/train/iter)",
              "self-play positions/s", "positions/CPU-s", "sims/s", "train samples/s",
              "samples/CPU-s", "1 step, no loop: samples/s", "eval FLOP/s (best batch)",
              "MFU", "peak", "iteration s", "note"]
    rows = []
    for r in results:
        sp, opt = r.config.selfplay, r.config.optim
        notes = [r.iteration_skipped and f"iteration {r.iteration_skipped}"]
        notes += [f"{label}: {m.note}" for label, m in (
            ("self-play", r.selfplay), ("train", r.train), ("1 step", r.train_step),
            ("iteration", r.iteration)) if m is not None and m.note]
        best = r.best_eval()
        rows.append([
            r.name, r.device, net_label(r.config),
            f"{sp.games} x {sp.moves} x {sp.num_simulations}",
            k_label(opt.sgd_steps, opt.batch_size, r.unroll),
            "/".join(f"{m.compile_s:.0f}" if m else "-"
                     for m in (r.selfplay, r.train, r.iteration)),
            fmt_rate(r.selfplay.per_wall_s) if r.selfplay else "-",
            fmt_rate(r.selfplay.per_cpu_s) if r.selfplay else "-",
            fmt_rate(r.simulations_per_call / r.selfplay.wall_s) if r.selfplay else "-",
            fmt_rate(r.train.per_wall_s) if r.train else "-",
            fmt_rate(r.train.per_cpu_s) if r.train else "-",
            fmt_rate(r.train_step.per_wall_s) if r.train_step else "-",
            f"{fmt_flops(best.flops_per_s)} (B={best.batch})" if best else "-",
            _pct(best.flops_per_s / r.peak.flops_per_s) if best else "-",
            r.peak.label(),
            f"{r.iteration.wall_s:.3g}" if r.iteration else "-",
            "; ".join(n for n in notes if n)])
    return markdown_table(header, rows)


def render_eval_table(results: Sequence[PresetResult]) -> str:
    header = ["preset", "net", "batch", "compile s", "ms/apply", "positions/s",
              "FLOP/s (model count)", "model GFLOP/pos", "XLA GFLOP/pos", "model/XLA",
              "MFU", "of matmul", "note"]
    rows = []
    for r in results:
        for e in r.eval:
            m = e.result
            rows.append([
                r.name, net_label(r.config), str(e.batch), f"{m.compile_s:.1f}",
                _ms(m.wall_s / e.inner), fmt_rate(m.per_wall_s), fmt_flops(e.flops_per_s),
                f"{e.model_flops / 1e9:.4g}",
                f"{e.xla_flops / 1e9:.4g}" if e.xla_flops else "n/a",
                f"{e.model_flops / e.xla_flops:.3f}" if e.xla_flops else "n/a",
                _pct(e.flops_per_s / r.peak.flops_per_s), _pct(e.flops_per_s / r.matmul_rate),
                m.note])
    return markdown_table(header, rows)


def render_loops_table(results: Sequence[PresetResult]) -> str:
    header = ["preset", "batch", "loop", "compile s", "ms/call", "positions/s",
              "positions/CPU-s", "sims/CPU-s", "vs mctx loop (CPU)", "note"]
    rows = []
    for r in results:
        for row in r.loops:
            m, ratio = row.result, r.vs_mctx(row)
            cells = [r.name, str(row.batch), row.loop]
            if m is None:
                rows.append(cells + ["-"] * 6 + [row.skipped])
                continue
            rows.append(cells + [
                f"{m.compile_s:.1f}", _ms(m.wall_s), fmt_rate(m.per_wall_s),
                fmt_rate(m.per_cpu_s), fmt_rate(row.simulations_per_call / m.cpu_s),
                f"{ratio:.2f}x" if ratio is not None else "-", m.note])
    return markdown_table(header, rows)


def render_report(out: dict, repeats: int) -> str:
    results = out["presets"]
    lines = [f"# Training throughput per preset, median of {repeats}; {describe_machine()}",
             "", render_main_table(results), ""]
    mm = ", ".join(f"{_short_dtype(dt)} {fmt_flops(m['flops_per_s'])}"
                   for dt, m in out["matmul"].items())
    first = next(iter(out["matmul"].values()))
    lines += [f"Measured matmul peak ({first['size']}^3, best of {first['calls']}, same run): "
              f"{mm}. B x T x S: self-play games x moves x simulations per call; positions "
              f"= B x T, sims = B x T x S. Train: K SGD steps x batch per call, in a lax.scan "
              f"unrolled as in the iteration; '1 step, no loop' is the same step jitted "
              f"alone, the reference for the loop's cost (XLA:CPU's own conv gradients run far "
              f"slower in loops, jax-ml/jax#12868; nets/conv.py avoids them). Iteration: "
              f"one AlphaZero.iteration. Compile time is excluded from every rate. MFU: the "
              f"best eval batch's FLOP/s (model count) over the peak named."]
    for r in results:
        best, parts = r.best_eval(), []
        if r.selfplay is not None:
            s = f"self-play runs the net at {fmt_flops(r.selfplay_net_flops_per_s)}"
            if best:
                s += f" ({_pct(r.selfplay_net_flops_per_s / best.flops_per_s)} of eval alone)"
            parts.append(s)
        if r.train is not None:
            s = f"training at {fmt_flops(r.train_net_flops_per_s)} (3 passes per sample)"
            if best:
                s += f" ({_pct(r.train_net_flops_per_s / best.flops_per_s)} of eval alone)"
            s += (f", the scan at {r.train.per_wall_s / r.train_step.per_wall_s:.2f}x the "
                  f"samples/s of one step without a loop")
            parts.append(s)
        if r.iteration is not None:
            parts.append(f"an iteration makes {fmt_rate(r.iteration.per_wall_s)} positions/s "
                         f"end to end")
        if parts:
            lines.append(f"- {r.name}: " + ", ".join(parts))
    if any(r.loops for r in results):
        first = next(r for r in results if r.loops)
        sp = first.config.selfplay
        lines += ["", "## Self-play by search loop and batch (`selfplay.games` = batch, "
                      "`search.loop`)", "", render_loops_table(results), "",
                  f"Each row: `selfplay.play` as in the self-play column (T x S = {sp.moves} x "
                  f"{sp.num_simulations} for {first.name}), with the preset's search and "
                  f"network, batch games per call and the simulation loop named: gomoku_jax "
                  f"(`search/tree_loop.py`) or mctx (`mctx.search`). positions = batch x T, sims = "
                  f"batch x T x S. vs mctx loop (CPU): positions/CPU-s over the mctx row's of "
                  f"the same preset and batch, measured in this run (> 1: faster than mctx)."]
    if any(r.eval for r in results):
        lines += ["", f"## Network evaluation (inference, `model.apply`, "
                      f"{out['eval_inner']} apply(s) per timed call)", "",
                  render_eval_table(results), "",
                  "model GFLOP/pos: `flops_per_position()` (convs and dense layers, 2 per "
                  "multiply-add, every 3x3 tap counted as the padded conv computes it); XLA "
                  "GFLOP/pos: XLA's cost analysis of the compiled apply over the batch (only "
                  "the taps inside the board, plus BatchNorm, ReLU and adds). MFU and 'of "
                  "matmul' use the model count."]
    return "\n".join(lines)


def to_json(out: dict, args: Optional[argparse.Namespace] = None) -> dict:
    return {"machine": describe_machine(), "backend": jax.default_backend(),
            "device_kind": jax.devices()[0].device_kind,
            "args": vars(args) if args is not None else None,
            "matmul": out["matmul"], "eval_applies_per_call": out["eval_inner"],
            "presets": [r.as_dict() for r in out["presets"]]}


# ----------------------------------------------------------------------------- CLI

def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", default=None,
                        help=f"comma-separated presets from {sorted(PRESETS)} (default: quick "
                             "on CPU, quick,gomoku15 elsewhere)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                        dest="assignments",
                        help="override a config field in every preset (repeatable), e.g. "
                             "selfplay.games=64 or net.dtype=float32")
    parser.add_argument("--eval-batch-sizes", default=",".join(map(str, DEFAULT_EVAL_BATCHES)),
                        help="network-evaluation batch sizes (default: %(default)s)")
    parser.add_argument("--eval-inner", type=int, default=0,
                        help="applies per timed eval call, a lax.scan over distinct inputs "
                             "(default 0: 1 on CPU, 16 on accelerators)")
    parser.add_argument("--measure", default=",".join(MEASUREMENTS),
                        help=f"which of {', '.join(MEASUREMENTS)} (default: all)")
    parser.add_argument("--selfplay-batches", default="",
                        help="selfplay_loops: self-play batch sizes (selfplay.games) "
                             "(default: each preset's own)")
    parser.add_argument("--loops", default=",".join(LOOPS),
                        help="selfplay_loops: search loops compared (search.loop) "
                             "(default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls, median reported")
    parser.add_argument("--max-seconds", type=float, default=DEFAULT_MAX_SECONDS,
                        help="time per measurement after its compile: repeats are cut to fit "
                             "it once the warm-up is timed (default: %(default)s)")
    parser.add_argument("--peak-tflops", type=float, default=None,
                        help="the device's peak for MFU, in TFLOP/s (default: the vendor spec "
                             "sheet for known accelerators, else the measured matmul peak)")
    parser.add_argument("--matmul-size", type=int, default=0,
                        help="side of the square matmul measured as a peak reference "
                             "(default 0: 2048 on CPU, 8192 on accelerators)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cpus", type=int, default=None,
                        help="pin the process to this many CPU cores before JAX starts")
    parser.add_argument("--out", default=None, help="also write the markdown report here")
    parser.add_argument("--json", default=None, metavar="OUT",
                        help="also write every measurement and config as JSON")
    progress.add_argument(parser)
    return parser


def main(args: argparse.Namespace) -> int:
    if args.cpus is not None:
        pin_cpus(args.cpus)
    text = args.presets or ("quick" if jax.default_backend() == "cpu" else "quick,gomoku15")
    presets = [p.strip() for p in text.split(",") if p.strip()]
    if not presets or any(p not in PRESETS for p in presets):
        raise SystemExit(f"error: --presets takes names from {sorted(PRESETS)}, got {text!r}")
    measure = [m.strip() for m in args.measure.split(",") if m.strip()]
    if not measure or any(m not in MEASUREMENTS for m in measure):
        raise SystemExit(f"error: --measure takes {', '.join(MEASUREMENTS)}, got "
                         f"{args.measure!r}")
    eval_batches = parse_int_list(args.eval_batch_sizes, "--eval-batch-sizes")
    selfplay_batches = (parse_int_list(args.selfplay_batches, "--selfplay-batches")
                        if args.selfplay_batches.strip() else None)
    loops = list(dict.fromkeys(x.strip() for x in args.loops.split(",") if x.strip()))
    if not loops or any(x not in LOOPS for x in loops):
        raise SystemExit(f"error: --loops takes {', '.join(LOOPS)}, got {args.loops!r}")
    if args.repeats < 1 or not args.max_seconds > 0 or args.eval_inner < 0 \
            or args.matmul_size < 0:
        raise SystemExit("error: --repeats must be >= 1, --max-seconds > 0, --eval-inner "
                         "and --matmul-size >= 0")
    if args.peak_tflops is not None and not args.peak_tflops > 0:
        raise SystemExit(f"error: --peak-tflops must be > 0, got {args.peak_tflops}")

    print(f"# Training throughput ({describe_machine()})", flush=True)
    t0 = time.perf_counter()
    try:
        total = count_measurements(preset_configs(presets, args.assignments), measure,
                                   eval_batches, selfplay_batches, loops)
        with progress.bar(total, "bench_train", "measurement", enabled=not args.no_progress) as bar:
            # the lines on stdout, through the bar when one shows
            out = run_benchmark(presets, assignments=args.assignments,
                                eval_batches=eval_batches, eval_inner=args.eval_inner,
                                repeats=args.repeats, max_seconds=args.max_seconds,
                                peak_tflops=args.peak_tflops, matmul_size=args.matmul_size,
                                measure=measure, seed=args.seed,
                                selfplay_batches=selfplay_batches, loops=loops,
                                log=progress.printer(bar),
                                tick=bar.update)
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    report = render_report(out, args.repeats)
    print("\n" + report)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    write_report(report, args.out, args.json, to_json(out, args))
    return 0


if __name__ == "__main__":
    sys.exit(main(build_parser().parse_args()))
