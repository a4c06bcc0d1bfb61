"""Training throughput per preset: self-play, SGD, network evaluation (FLOP/s, MFU) and one
whole AlphaZero iteration, each jitted, compile time apart, median of `--repeats` calls.

For every training preset (`train/config.py` PRESETS, after `--set` and the scaling knobs):
  self-play   `selfplay.play` with the preset's network (`NetworkEvaluator(model.apply)`),
              search config, B games x T moves x S simulations, the boards sharded as in
              the trainer. positions = B x T, simulations = B x T x S.
  train       K `learner.sgd_step`s in one `lax.scan`, each on `AlphaZero.training_batch`
              (uniform replay sample + tactical examples + D4 augmentation), from a buffer
              filled with the self-play call's samples, unrolled as the trainer does it
              (`AlphaZero.sgd_unroll`: all K steps on CPU unless `optim.unroll` says
              otherwise). samples = K x batch size. Beside it, the same step jitted alone
              ("1 step, no loop"): XLA:CPU runs convolution gradients inside a loop body
              10-80x slower than outside one (jax-ml/jax#12868), and this pair shows what
              the loop (or its unrolling) costs; `--set optim.unroll=1` shows the loop.
  iteration   one `AlphaZero.iteration` (self-play + buffer + K steps), as the trainer
              compiles it (shardings, donation): the end-to-end rate.
  eval        `model.apply` (inference) alone on random observations at each of
              `--eval-batch-sizes`: FLOP/s = batch x `model.flops_per_position()` / seconds,
              with XLA's own count (`compiled.cost_analysis()["flops"]`) beside the model's.
MFU = eval FLOP/s / the device's peak for the net's dtype: the vendor spec sheet figure
for known accelerators (dense, no sparsity), or `--peak-tflops`; otherwise (CPUs) the rate
of a large matmul measured in the same run ("measured matmul peak": the fastest of a few
calls, in the net's dtype or float32, whichever is faster). The matmul reference is
measured and shown on every device. It is a reference, not a ceiling: XLA:CPU's convs
can beat its matmul, and a shared machine's load changes during a run.

Budget (`--max-seconds` per measurement, compile excluded): before a preset runs, its
longest measurement's (repeats + 1) calls are estimated from its FLOPs at a fraction of
the measured matmul rate (training x CPU_LOOP_PENALTY on CPU). A preset over the budget
is shrunk (B, S, T, batch, K halved, the largest relative to its floor first, down to
small floors; knobs given on the command line are left alone) and says so; one still over
it at the floors has its self-play, train and iteration skipped with the reason (its
network evaluation still runs). An eval batch size estimated over the budget is skipped,
so is the iteration when the measured self-play + train take longer than the budget, and
a measurement whose warm-up call shows it will not fit times fewer repeats (noted).
`--force` runs everything as configured. So gomoku15 on a CPU is shrunk or skipped unless
forced. Rates are per second of wall time and per second of process CPU time (the
machines are shared; CPU time is the steadier number).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from typing import Any, Callable, Optional, Sequence

import jax
import jax.numpy as jnp

from gomoku_jax.benchmarks.timing import (Measurement, describe_machine, fmt_rate,
                                          markdown_table, parse_int_list, pin_cpus, time_jitted)
from gomoku_jax.train import learner, replay, selfplay
from gomoku_jax.train.alphazero import AlphaZero, make_model
from gomoku_jax.train.config import PRESETS, TrainConfig, override

DEFAULT_PRESETS = ("quick", "gomoku15")
DEFAULT_EVAL_BATCHES = (64, 256, 1024)
DEFAULT_MAX_SECONDS = 300.0
MATMUL_CALLS = 5

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

# Budget estimates: the fraction of the measured matmul rate assumed for the net inside
# self-play (search overhead included), inside training (forward + backward = 3 forward
# passes) and alone. Only used to decide what to shrink or skip, never reported as a rate.
ASSUMED_EFFICIENCY = {"selfplay": 0.3, "train": 0.3, "eval": 0.5}
TRAIN_PASSES = 3
# XLA:CPU runs convolution gradients inside a loop body (the SGD `lax.scan`) far slower
# than outside one (jax-ml/jax#12868): 10x to 80x for the weight gradient of a 3x3 conv
# of 32 to 128 channels on a 2-core CPU. The trainer unrolls the whole scan on CPU by
# default (`optim.unroll` = 0); where a loop remains (`optim.unroll` < K), the CPU
# training estimate is multiplied by this.
CPU_LOOP_PENALTY = 30.0
# Scaling knobs: name -> (config key, floor when shrinking). Shrinking halves the largest
# value relative to its floor, self-play or training first, whichever is estimated slower.
KNOBS = {
    "games": ("selfplay.games", 2),
    "simulations": ("selfplay.num_simulations", 4),
    "moves": ("selfplay.moves", 2),
    "batch_size": ("optim.batch_size", 16),
    "sgd_steps": ("optim.sgd_steps", 1),
}
SELFPLAY_KNOBS = ("games", "simulations", "moves")
TRAIN_KNOBS = ("batch_size", "sgd_steps")


# ----------------------------------------------------------------------------- peaks

def spec_peak(device_kind: str, dtype: str) -> Optional[float]:
    """Vendor peak FLOP/s of one device of this kind for `dtype`, or None if unknown."""
    for name, peaks in SPEC_PEAK_TFLOPS:
        if name.lower() in device_kind.lower():
            tflops = peaks.get(dtype)
            return None if tflops is None else tflops * 1e12
    return None


def default_matmul_size() -> int:
    return 2048 if jax.default_backend() == "cpu" else 8192


def measure_matmul(dtype: str, size: int, calls: int = 5) -> dict:
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
    source: str  # "vendor spec sheet", "measured matmul peak", "--peak-tflops"
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
    size = matmul[used]["size"]
    return Peak(rate, f"measured matmul peak ({size}^3)", used)


# ----------------------------------------------------------------------------- timing

def _timed_note(timed: int, repeats: int) -> str:
    if timed == repeats:
        return ""
    if timed == 0:
        return "one call (the warm-up) over --max-seconds"
    return f"median of {timed} (budget)"


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


# ----------------------------------------------------------------------------- configs

def knob_assignments(values: dict[str, Optional[int]]) -> list[str]:
    """`section.field=value` for the scaling knobs given (None: not given)."""
    return [f"{KNOBS[k][0]}={v}" for k, v in values.items() if v is not None]


def knob_value(config: TrainConfig, knob: str) -> int:
    section, field = KNOBS[knob][0].split(".")
    return getattr(getattr(config, section), field)


def with_knobs(config: TrainConfig, values: dict[str, int]) -> TrainConfig:
    return override(config, knob_assignments(values))


def sgd_unroll(config: TrainConfig, platform: str) -> int:
    """The SGD scan's unroll on `platform`, by `AlphaZero.sgd_unroll`'s rule: `optim.unroll`,
    or 0 = all K steps on CPU and 1 elsewhere."""
    if config.optim.unroll:
        return config.optim.unroll
    return config.optim.sgd_steps if platform == "cpu" else 1


def loop_penalty(config: TrainConfig, platform: str) -> float:
    """CPU_LOOP_PENALTY where the SGD steps run inside a loop on CPU, else 1."""
    looped = sgd_unroll(config, platform) < config.optim.sgd_steps
    return CPU_LOOP_PENALTY if platform == "cpu" and looped else 1.0


def estimate_seconds(config: TrainConfig, fpp: float, rate: float,
                     platform: str = "cpu") -> dict[str, float]:
    """Rough seconds per call of self-play, training and the iteration (their sum), from
    the net's FLOPs at `ASSUMED_EFFICIENCY` of the matmul rate `rate` (training slowed by
    `loop_penalty` on `platform`)."""
    penalty = loop_penalty(config, platform)
    sp, opt = config.selfplay, config.optim
    evals = sp.games * sp.moves * (sp.num_simulations + 1) * evaluations_per_node(config)
    out = {"selfplay": evals * fpp / (rate * ASSUMED_EFFICIENCY["selfplay"]),
           "train": (penalty * opt.sgd_steps * opt.batch_size * TRAIN_PASSES * fpp
                     / (rate * ASSUMED_EFFICIENCY["train"]))}
    out["iteration"] = out["selfplay"] + out["train"]
    return out


def evaluations_per_node(config: TrainConfig) -> int:
    """Network passes per searched node: 8 when the search averages the D4 transforms."""
    return 8 if config.search.symmetry == "average" else 1


def measurement_seconds(est: dict[str, float], measure: Sequence[str]) -> float:
    """Estimated seconds per call of the longest measurement in `measure` (self-play also
    runs for "train", to fill the buffer)."""
    if "iteration" in measure:
        return est["iteration"]
    parts = [est["selfplay"]] if {"selfplay", "train"} & set(measure) else []
    if "train" in measure:
        parts.append(est["train"])
    return max(parts, default=0.0)


def shrink_to_budget(config: TrainConfig, fpp: float, rate: float, calls: int,
                     budget_s: float, locked: Sequence[str] = (), platform: str = "cpu",
                     measure: Sequence[str] = ("selfplay", "train", "iteration")
                     ) -> tuple[TrainConfig, dict[str, tuple[int, int]], float]:
    """Halve the scaling knobs (not `locked` ones, nor those of parts not in `measure`)
    until the longest measurement's `calls` calls are estimated to take at most
    `budget_s`: (config, {knob: (old, new)}, that estimate in seconds). The estimate can
    still be over the budget when every knob is at its floor; the caller decides."""
    values = {k: knob_value(config, k) for k in KNOBS}
    devices = config.run.devices or jax.device_count()
    floors = {k: KNOBS[k][1] for k in KNOBS}
    floors["games"] = max(floors["games"], devices)
    floors["batch_size"] = max(floors["batch_size"], devices)
    if "iteration" not in measure and "train" not in measure:
        locked = list(locked) + list(TRAIN_KNOBS)
    if not {"iteration", "train", "selfplay"} & set(measure):
        locked = list(locked) + list(SELFPLAY_KNOBS)
    changed: dict[str, tuple[int, int]] = {}
    current = config
    while True:
        est = estimate_seconds(current, fpp, rate, platform)
        if calls * measurement_seconds(est, measure) <= budget_s:
            break
        first = SELFPLAY_KNOBS if est["selfplay"] >= est["train"] else TRAIN_KNOBS
        second = TRAIN_KNOBS if first is SELFPLAY_KNOBS else SELFPLAY_KNOBS
        pick = None
        for group in (first, second):
            free = [k for k in group if k not in locked and values[k] > floors[k]]
            if free:
                pick = max(free, key=lambda k: values[k] / floors[k])
                break
        if pick is None:
            break
        new = max(values[pick] // 2, floors[pick])
        if pick in ("games", "batch_size"):
            new -= new % devices
        changed[pick] = (changed.get(pick, (values[pick],))[0], new)
        values[pick] = new
        current = with_knobs(config, {k: values[k] for k in changed})
    return current, changed, calls * measurement_seconds(
        estimate_seconds(current, fpp, rate, platform), measure)


def k_label(steps: int, batch: int, unroll: int) -> str:
    """"K x batch", and how the scan is unrolled when it is."""
    loop = "" if unroll <= 1 else " unrolled" if unroll >= steps else f" unroll {unroll}"
    return f"{steps} x {batch}{loop}"


def net_label(config: TrainConfig) -> str:
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


# ----------------------------------------------------------------------------- measurements

@dataclasses.dataclass
class EvalRow:
    batch: int
    inner: int  # applies per timed call (a lax.scan over distinct observations)
    result: Optional[Measurement] = None
    model_flops: float = 0.0  # per position, `flops_per_position`
    xla_flops: Optional[float] = None  # per position, XLA's cost analysis
    skipped: str = ""

    @property
    def flops_per_s(self) -> float:
        return self.model_flops * self.result.work / self.result.wall_s if self.result else 0.0

    def as_dict(self, peak: Optional[Peak] = None, matmul_rate: Optional[float] = None
                ) -> dict:
        d = {"batch": self.batch, "applies_per_call": self.inner,
             "model_flops_per_position": self.model_flops,
             "xla_flops_per_position": self.xla_flops, "skipped": self.skipped}
        if self.result is not None:
            m = self.result
            d.update(compile_s=m.compile_s, wall_s=m.wall_s, cpu_s=m.cpu_s, note=m.note,
                     positions_per_s=m.per_wall_s, positions_per_cpu_s=m.per_cpu_s,
                     flops_per_s=self.flops_per_s)
            if peak is not None:
                d["mfu"] = self.flops_per_s / peak.flops_per_s
            if matmul_rate:
                d["fraction_of_matmul"] = self.flops_per_s / matmul_rate
        return d


def _meas_dict(m: Optional[Measurement], unit: str) -> Optional[dict]:
    if m is None:
        return None
    return {"compile_s": m.compile_s, "wall_s": m.wall_s, "cpu_s": m.cpu_s, "note": m.note,
            f"{unit}_per_call": m.work, f"{unit}_per_s": m.per_wall_s,
            f"{unit}_per_cpu_s": m.per_cpu_s}


@dataclasses.dataclass
class PresetResult:
    """Everything measured for one preset (None: not measured)."""

    name: str
    config: TrainConfig
    device: str
    notes: list[str] = dataclasses.field(default_factory=list)
    shrunk: dict = dataclasses.field(default_factory=dict)
    skipped: str = ""
    fpp: float = 0.0
    peak: Optional[Peak] = None
    matmul_rate: Optional[float] = None
    selfplay: Optional[Measurement] = None
    train: Optional[Measurement] = None  # K steps in a lax.scan, as in the iteration
    train_step: Optional[Measurement] = None  # reference: one jitted step, no loop
    unroll: int = 1  # the SGD scan's unroll (`AlphaZero.sgd_unroll`)
    iteration: Optional[Measurement] = None
    iteration_skipped: str = ""
    eval: list[EvalRow] = dataclasses.field(default_factory=list)

    @property
    def simulations_per_call(self) -> int:
        sp = self.config.selfplay
        return sp.games * sp.moves * sp.num_simulations

    @property
    def selfplay_net_flops_per_s(self) -> float:
        """FLOP/s of the network inside self-play: B x T x (S + 1) passes (x8 when the
        search averages over D4) per call."""
        if self.selfplay is None:
            return 0.0
        sp = self.config.selfplay
        evals = sp.games * sp.moves * (sp.num_simulations + 1) * evaluations_per_node(
            self.config)
        return evals * self.fpp / self.selfplay.wall_s

    @property
    def train_net_flops_per_s(self) -> float:
        """FLOP/s of the network inside training, counting forward + backward as 3 forward
        passes per sample."""
        if self.train is None:
            return 0.0
        return TRAIN_PASSES * self.fpp * self.train.per_wall_s

    def best_eval(self) -> Optional[EvalRow]:
        rows = [r for r in self.eval if r.result is not None]
        return max(rows, key=lambda r: r.flops_per_s) if rows else None

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
            "sgd_unroll": self.unroll,
            "shrunk": {k: {"from": a, "to": b} for k, (a, b) in self.shrunk.items()},
            "notes": self.notes, "skipped": self.skipped,
            "peak": None if self.peak is None else dataclasses.asdict(self.peak),
            "matmul_flops_per_s": self.matmul_rate,
            "selfplay": sp, "train": tr,
            "train_one_step_no_loop": _meas_dict(self.train_step, "samples"),
            "iteration": _meas_dict(self.iteration, "positions"),
            "iteration_skipped": self.iteration_skipped,
            "eval": [r.as_dict(self.peak, self.matmul_rate) for r in self.eval],
            "best_eval_flops_per_s": best.flops_per_s if best else None,
            "mfu": (best.flops_per_s / self.peak.flops_per_s
                    if best and self.peak else None),
        }


def _measurement(name: str, batch: int, steps: int, timing: tuple, repeats: int
                 ) -> Measurement:
    compile_s, wall, cpu, timed = timing
    return Measurement(name, "", batch, steps, compile_s, wall, cpu,
                       _timed_note(timed, repeats))


def measure_selfplay(trainer: AlphaZero, variables, repeats: int, seed: int,
                     max_seconds: Optional[float] = None) -> tuple[Measurement, Any]:
    """Time `selfplay.play` as the iteration calls it (work = B x T positions); also
    returns the samples of the warm-up call (for the replay buffer)."""
    cfg = trainer.config
    sp = cfg.selfplay
    key = jax.random.key(seed)
    games = jax.device_put(selfplay.new_games(trainer.game_config, key, sp.games), trainer.data)

    def run(variables, games, key):
        return selfplay.play(trainer.evaluator, cfg.search, sp.num_simulations, sp.algorithm,
                             sp.moves, variables, games, key)

    def thread(out, args):
        variables, games, key = args
        return (variables, out[0] if sp.carry_games else games, jax.random.fold_in(key, 1))

    first: list = []
    timing = time_jitted(jax.jit(run), (variables, games, key), repeats, thread, max_seconds,
                          first)
    return _measurement("self-play", sp.games, sp.moves, timing, repeats), first[0][1]


def fill_buffer(buffer: replay.Replay, samples) -> replay.Replay:
    """`buffer` with every one of `samples` added (valid or not: only the cost matters)."""
    return jax.jit(replay.add)(buffer, samples, jnp.ones(samples.value.shape, bool))


def sgd_steps_fn(trainer: AlphaZero, steps: int) -> Callable:
    """run(params, batch_stats, opt_state, buffer, key): `steps` SGD steps in a
    `lax.scan`, the loop of the iteration (`AlphaZero.sgd_steps`)."""

    def run(params, batch_stats, opt_state, buffer, key):
        carry, (parts, grad_norm) = trainer.sgd_steps(params, batch_stats, opt_state, buffer,
                                                      key, num_steps=steps)
        return carry, (parts.loss, grad_norm)

    return run


def one_step_fn(trainer: AlphaZero) -> Callable:
    """The same as `sgd_steps_fn(trainer, 1)` without the loop: one SGD step."""
    cfg = trainer.config

    def run(params, batch_stats, opt_state, buffer, key):
        batch = trainer.training_batch(buffer, key)
        new = learner.sgd_step(trainer.model, trainer.optimizer, cfg.optim.value_weight,
                               params, batch_stats, opt_state, batch)
        return new[:3], (new[3].loss, new[4])

    return run


def measure_train(trainer: AlphaZero, state, buffer, repeats: int, seed: int,
                  loop: bool = True, max_seconds: Optional[float] = None) -> Measurement:
    """Time K SGD steps in a `lax.scan` (`loop`, work = K x batch samples), or one step
    without a loop (work = batch samples)."""
    cfg = trainer.config
    steps = cfg.optim.sgd_steps if loop else 1
    fn = sgd_steps_fn(trainer, steps) if loop else one_step_fn(trainer)

    def thread(out, args):
        (params, stats, opt_state), _ = out
        return params, stats, opt_state, args[3], jax.random.fold_in(args[4], 1)

    args = (state.params, state.batch_stats, state.opt_state, buffer, jax.random.key(seed))
    timing = time_jitted(jax.jit(fn), args, repeats, thread, max_seconds)
    return _measurement("train" if loop else "train step", cfg.optim.batch_size, steps, timing,
                        repeats)


def measure_iteration(trainer: AlphaZero, repeats: int, seed: int,
                      max_seconds: Optional[float] = None) -> Measurement:
    """Time `AlphaZero.iteration` (its own shardings and donation: each call takes the
    previous call's state); work = B x T positions."""
    sp = trainer.config.selfplay
    state = trainer.init(seed)
    timing = time_jitted(trainer.iteration, (state,), repeats,
                          lambda out, args: (out[0],), max_seconds)
    return _measurement("iteration", sp.games, sp.moves, timing, repeats)


def eval_fn(model) -> Callable:
    """run(variables, obs float32[R, b, N, N, C]) -> a scalar: R inference passes in a
    `lax.scan`, each on its own observations, reduced so none is dead code."""

    def run(variables, obs):
        def body(acc, o):
            logits, value = model.apply(variables, o)
            return acc + jnp.sum(logits[:, 0]) + jnp.sum(value), None

        return jax.lax.scan(body, jnp.float32(0), obs)[0]

    return run


def measure_eval(trainer: AlphaZero, variables, batch: int, inner: int, repeats: int,
                 seed: int, max_seconds: Optional[float] = None) -> EvalRow:
    """`inner` x `batch` inference passes per timed call, and XLA's flop count of one."""
    model = trainer.model
    n, planes = trainer.game_config.board_size, trainer.game_config.num_planes
    obs = jax.random.bernoulli(jax.random.key(seed), 0.2,
                               (inner, batch, n, n, planes)).astype(jnp.float32)
    row = EvalRow(batch, inner, model_flops=float(model.flops_per_position()))
    counted = xla_flops(jax.jit(model.apply).lower(variables, obs[0]).compile())
    row.xla_flops = counted / batch if counted is not None else None
    timing = time_jitted(jax.jit(eval_fn(model)), (variables, obs), repeats,
                          max_seconds=max_seconds)
    row.result = _measurement("eval", batch, inner, timing, repeats)
    return row


# ----------------------------------------------------------------------------- driver

def device_label(trainer: AlphaZero) -> str:
    devices = trainer.mesh.devices.ravel()
    kind = devices[0].device_kind
    return kind if len(devices) == 1 else f"{len(devices)} x {kind}"


def _log_measurement(log, label: str, m: Measurement, unit: str, extra: str = "") -> None:
    log(f"  {label:<18} compile {m.compile_s:6.1f} s  {m.wall_s:8.3f} s/call  "
        f"{fmt_rate(m.per_wall_s):>8} {unit}/s  {fmt_rate(m.per_cpu_s):>8} {unit}/CPU-s"
        f"{extra}{'  (' + m.note + ')' if m.note else ''}")


def run_preset(name: str, config: TrainConfig, matmul: dict[str, dict], *,
               eval_batches: Sequence[int], eval_inner: int, repeats: int, max_seconds: float,
               force: bool, locked: Sequence[str], peak_tflops: Optional[float],
               measure: Sequence[str], seed: int = 0, log=print) -> PresetResult:
    """All measurements of one preset (see the module docstring)."""
    model = make_model(config)
    fpp = float(model.flops_per_position())
    dtype = config.net.dtype
    rate = measured_rate(matmul, dtype)[0]
    platform = jax.default_backend()
    calls = repeats + 1
    budget = None if force else max_seconds
    shrunk: dict = {}
    if not force:
        config, shrunk, est = shrink_to_budget(config, fpp, rate, calls, max_seconds, locked,
                                               platform, measure)
    else:
        est = calls * measurement_seconds(estimate_seconds(config, fpp, rate, platform),
                                          measure)
    trainer = AlphaZero(config)
    res = PresetResult(name, config, device_label(trainer), shrunk=shrunk, fpp=fpp,
                       matmul_rate=rate, unroll=trainer.sgd_unroll)
    res.peak = choose_peak(jax.devices()[0].device_kind, dtype, matmul, peak_tflops)
    sp = config.selfplay
    log(f"## {name}: net {net_label(config)} ({fmt_flops(fpp).replace('/s', '')} per "
        f"position), B x T x S = {sp.games} x {sp.moves} x {sp.num_simulations}, "
        f"K x batch = {k_label(config.optim.sgd_steps, config.optim.batch_size, res.unroll)}")
    if shrunk:
        what = ", ".join(f"{KNOBS[k][0]} {a} -> {b}" for k, (a, b) in shrunk.items())
        res.notes.append(f"shrunk to fit --max-seconds {max_seconds:g} (est. {est:.0f} s): "
                         f"{what}")
        log(f"  {res.notes[-1]}")
    if not force and est > max_seconds:
        res.skipped = (f"self-play, train and iteration skipped: est. {est:.0f} s per "
                       f"measurement even at the floors, over --max-seconds {max_seconds:g} "
                       f"(pass --force or a larger --max-seconds)")
        log(f"  {res.skipped}")
        measure = [m for m in measure if m == "eval"]

    variables = trainer.model.init(jax.random.key(seed))
    if "selfplay" in measure or "train" in measure:
        selfplay_m, samples = measure_selfplay(trainer, variables, repeats, seed, budget)
        if "selfplay" in measure:
            res.selfplay = selfplay_m
            _log_measurement(log, "self-play", selfplay_m, "positions",
                             f"  {fmt_rate(res.simulations_per_call / selfplay_m.wall_s):>8}"
                             f" sims/s")
        if "train" in measure:
            state = trainer.init(seed)
            buffer = fill_buffer(state.buffer, samples)
            res.train_step = measure_train(trainer, state, buffer, repeats, seed, loop=False,
                                           max_seconds=budget)
            _log_measurement(log, "train, 1 step", res.train_step, "samples")
            res.train = measure_train(trainer, state, buffer, repeats, seed,
                                      max_seconds=budget)
            _log_measurement(log, f"train, {config.optim.sgd_steps} steps", res.train,
                             "samples")
            del state, buffer
        del samples
    if "iteration" in measure:
        if res.selfplay is not None and res.train is not None and not force:
            est_iter = res.selfplay.wall_s + res.train.wall_s
            if est_iter > max_seconds:
                res.iteration_skipped = (f"skipped (est. {est_iter:.0f} s per call from "
                                         f"self-play + train > --max-seconds "
                                         f"{max_seconds:g})")
        if not res.iteration_skipped:
            res.iteration = measure_iteration(trainer, repeats, seed, budget)
            _log_measurement(log, "iteration", res.iteration, "positions")
        else:
            log(f"  iteration          {res.iteration_skipped}")
    if "eval" in measure:
        last: Optional[EvalRow] = None
        for b in sorted(eval_batches):
            if last is not None:
                per_call = last.result.wall_s * (b / last.batch)
            else:
                per_call = b * eval_inner * fpp / (rate * ASSUMED_EFFICIENCY["eval"])
            if not force and calls * per_call > max_seconds:
                row = EvalRow(b, eval_inner, model_flops=fpp,
                              skipped=f"skipped (est. {calls * per_call:.0f} s)")
                log(f"  eval B={b:<11} {row.skipped}")
            else:
                row = measure_eval(trainer, variables, b, eval_inner, repeats, seed, budget)
                last = row
                mfu = row.flops_per_s / res.peak.flops_per_s
                log(f"  eval B={b:<11} compile {row.result.compile_s:6.1f} s  "
                    f"{1e3 * row.result.wall_s / eval_inner:8.2f} ms/apply  "
                    f"{fmt_flops(row.flops_per_s):>14}  MFU {_pct(mfu)}")
            res.eval.append(row)
    return res


def run_benchmark(presets: Sequence[str], *, assignments: Sequence[str] = (),
                  knobs: Optional[dict[str, Optional[int]]] = None,
                  eval_batches: Sequence[int] = DEFAULT_EVAL_BATCHES, eval_inner: int = 0,
                  repeats: int = 3, max_seconds: float = DEFAULT_MAX_SECONDS,
                  force: bool = False, peak_tflops: Optional[float] = None,
                  matmul_size: int = 0,
                  measure: Sequence[str] = ("selfplay", "train", "iteration", "eval"),
                  seed: int = 0, log=print) -> dict:
    """Measure every preset; returns {"matmul": {dtype: measurement}, "presets":
    [PresetResult], "eval_inner": applies per timed eval call}.

    Raises:
      ValueError: an unknown preset or a bad `--set` assignment / knob value.
    """
    knobs = {k: v for k, v in (knobs or {}).items() if v is not None}
    configs = {}
    for name in presets:
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}; available: {sorted(PRESETS)}")
        configs[name] = override(override(PRESETS[name], assignments),
                                 knob_assignments(knobs))
    locked = set(knobs)
    for item in assignments:  # a knob set with --set is the user's, too
        key = item.partition("=")[0].strip()
        locked |= {k for k, (path, _) in KNOBS.items() if path == key}
    eval_inner = eval_inner or (1 if jax.default_backend() == "cpu" else 16)
    size = matmul_size or default_matmul_size()
    dtypes = sorted({"float32"} | {c.net.dtype for c in configs.values()})
    calls = max(repeats, MATMUL_CALLS)
    log(f"## measured matmul peak ({size}^3, best of {calls})")
    matmul = {}
    for dt in dtypes:
        matmul[dt] = measure_matmul(dt, size, calls)
        log(f"  {dt:<9} {fmt_flops(matmul[dt]['flops_per_s'])}")
    results = [run_preset(name, cfg, matmul, eval_batches=eval_batches, eval_inner=eval_inner,
                          repeats=repeats, max_seconds=max_seconds, force=force,
                          locked=sorted(locked), peak_tflops=peak_tflops, measure=measure,
                          seed=seed, log=log)
               for name, cfg in configs.items()]
    return {"matmul": matmul, "presets": results, "eval_inner": eval_inner}


# ----------------------------------------------------------------------------- report

def _ms(seconds: float) -> str:
    ms = 1e3 * seconds
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.1f}" if ms >= 1 else f"{ms:.2f}"


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %" if x >= 0.001 else f"{100 * x:.3f} %"


def render_main_table(results: Sequence[PresetResult]) -> str:
    header = ["preset", "device", "net", "B x T x S", "K x batch", "compile s (sp/train/iter)",
              "self-play positions/s", "positions/CPU-s", "sims/s", "train samples/s",
              "samples/CPU-s", "1 step, no loop: samples/s", "eval FLOP/s (best batch)",
              "MFU", "peak", "iteration s", "note"]
    rows = []
    for r in results:
        sp, opt = r.config.selfplay, r.config.optim
        head = [r.name, r.device, net_label(r.config),
                f"{sp.games} x {sp.moves} x {sp.num_simulations}",
                k_label(opt.sgd_steps, opt.batch_size, r.unroll)]
        notes = list(r.notes)
        if r.skipped:
            notes.append(r.skipped)
        compiles = "/".join(f"{m.compile_s:.0f}" if m else "-"
                            for m in (r.selfplay, r.train, r.iteration))
        best = r.best_eval()
        if r.iteration_skipped:
            notes.append(f"iteration {r.iteration_skipped}")
        for label, m in (("self-play", r.selfplay), ("train", r.train),
                         ("1 step", r.train_step), ("iteration", r.iteration)):
            if m is not None and m.note:
                notes.append(f"{label}: {m.note}")
        rows.append(head + [
            compiles,
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
            "; ".join(notes)])
    return markdown_table(header, rows)


def render_eval_table(results: Sequence[PresetResult]) -> str:
    header = ["preset", "net", "batch", "compile s", "ms/apply", "positions/s",
              "FLOP/s (model count)", "model GFLOP/pos", "XLA GFLOP/pos", "model/XLA",
              "MFU", "of matmul", "note"]
    rows = []
    for r in results:
        for e in r.eval:
            head = [r.name, net_label(r.config), str(e.batch)]
            xla = f"{e.xla_flops / 1e9:.4g}" if e.xla_flops else "n/a"
            ratio = f"{e.model_flops / e.xla_flops:.3f}" if e.xla_flops else "n/a"
            if e.result is None:
                rows.append(head + ["-", "-", "-", "-", f"{e.model_flops / 1e9:.4g}", xla,
                                    ratio, "-", "-", e.skipped])
                continue
            m = e.result
            rows.append(head + [
                f"{m.compile_s:.1f}", _ms(m.wall_s / e.inner), fmt_rate(m.per_wall_s),
                fmt_flops(e.flops_per_s), f"{e.model_flops / 1e9:.4g}", xla, ratio,
                _pct(e.flops_per_s / r.peak.flops_per_s),
                _pct(e.flops_per_s / r.matmul_rate), m.note])
    return markdown_table(header, rows)


def render_report(out: dict, repeats: int) -> str:
    results = out["presets"]
    lines = [f"# Training throughput per preset, median of {repeats}; {describe_machine()}",
             "", render_main_table(results), ""]
    mm = ", ".join(f"{_short_dtype(dt)} {fmt_flops(m['flops_per_s'])}"
                   for dt, m in out["matmul"].items())
    first = next(iter(out["matmul"].values()))
    lines += [f"Measured matmul peak ({first['size']}^3, best of {first['calls']}, same run): "
              f"{mm}. B x T x S: self-play games x "
              f"moves x simulations per call; positions = B x T, sims = B x T x S. Train: "
              f"K SGD steps x batch per call, in a lax.scan unrolled as in the iteration; "
              f"'1 step, no loop' is the same step jitted alone, the reference for the "
              f"loop's cost (XLA:CPU runs conv gradients inside loops far slower, "
              f"jax-ml/jax#12868, hence the unrolling on CPU). "
              f"Iteration: one AlphaZero.iteration. Compile time is excluded from every rate. "
              f"MFU: the best eval batch's FLOP/s (model count) over the peak named."]
    for r in results:
        if r.selfplay is None and r.train is None:
            continue
        best = r.best_eval()
        parts = []
        if r.selfplay is not None:
            s = f"self-play runs the net at {fmt_flops(r.selfplay_net_flops_per_s)}"
            if best:
                s += f" ({_pct(r.selfplay_net_flops_per_s / best.flops_per_s)} of eval alone)"
            parts.append(s)
        if r.train is not None:
            s = f"training at {fmt_flops(r.train_net_flops_per_s)} (3 passes per sample)"
            if best:
                s += f" ({_pct(r.train_net_flops_per_s / best.flops_per_s)} of eval alone)"
            if r.train_step is not None:
                s += (f", the scan at {r.train.per_wall_s / r.train_step.per_wall_s:.2f}x the "
                      f"samples/s of one step without a loop")
            parts.append(s)
        if r.iteration is not None:
            parts.append(f"an iteration makes {fmt_rate(r.iteration.per_wall_s)} positions/s "
                         f"end to end")
        lines.append(f"- {r.name}: " + ", ".join(parts))
    if not any(r.eval for r in results):
        return "\n".join(lines)
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

MEASUREMENTS = ("selfplay", "train", "iteration", "eval")


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", default=",".join(DEFAULT_PRESETS),
                        help=f"comma-separated presets from {sorted(PRESETS)} "
                             "(default: %(default)s)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                        dest="assignments",
                        help="override a config field in every preset (repeatable), e.g. "
                             "net.dtype=float32")
    parser.add_argument("--games", type=int, help="self-play games B in every preset")
    parser.add_argument("--moves", type=int, help="self-play moves T per call")
    parser.add_argument("--simulations", type=int, help="search simulations S per move")
    parser.add_argument("--batch-size", type=int, help="SGD batch size")
    parser.add_argument("--sgd-steps", type=int, help="SGD steps K per call")
    parser.add_argument("--eval-batch-sizes", default=",".join(map(str, DEFAULT_EVAL_BATCHES)),
                        help="network-evaluation batch sizes (default: %(default)s)")
    parser.add_argument("--eval-inner", type=int, default=0,
                        help="applies per timed eval call, a lax.scan over distinct inputs "
                             "(default 0: 1 on CPU, 16 on accelerators)")
    parser.add_argument("--measure", default=",".join(MEASUREMENTS),
                        help="which of selfplay, train, iteration, eval (default: all)")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls, median reported")
    parser.add_argument("--max-seconds", type=float, default=DEFAULT_MAX_SECONDS,
                        help="time budget per measurement ((repeats + 1) calls, compile "
                             "excluded): presets estimated over it are shrunk, or skipped "
                             "(default: %(default)s)")
    parser.add_argument("--force", action="store_true",
                        help="run every preset as configured: no shrinking, no skipping")
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
    return parser


def main(args: argparse.Namespace) -> int:
    presets = [p.strip() for p in args.presets.split(",") if p.strip()]
    unknown = [p for p in presets if p not in PRESETS]
    if unknown or not presets:
        raise SystemExit(f"error: --presets takes names from {sorted(PRESETS)}, got "
                         f"{args.presets!r}")
    measure = [m.strip() for m in args.measure.split(",") if m.strip()]
    if not measure or any(m not in MEASUREMENTS for m in measure):
        raise SystemExit(f"error: --measure takes {', '.join(MEASUREMENTS)}, got "
                         f"{args.measure!r}")
    eval_batches = parse_int_list(args.eval_batch_sizes, "--eval-batch-sizes")
    knobs = {k: getattr(args, k) for k in KNOBS}
    for k, v in knobs.items():
        if v is not None and v < 1:
            raise SystemExit(f"error: --{k.replace('_', '-')} must be >= 1, got {v}")
    if args.repeats < 1 or not args.max_seconds > 0 or args.eval_inner < 0 \
            or args.matmul_size < 0:
        raise SystemExit("error: --repeats must be >= 1, --max-seconds > 0, --eval-inner "
                         "and --matmul-size >= 0")
    if args.peak_tflops is not None and not args.peak_tflops > 0:
        raise SystemExit(f"error: --peak-tflops must be > 0, got {args.peak_tflops}")
    if args.cpus is not None:
        pin_cpus(args.cpus)

    print(f"# Training throughput ({describe_machine()})", flush=True)
    t0 = time.perf_counter()
    try:
        out = run_benchmark(presets, assignments=args.assignments, knobs=knobs,
                            eval_batches=eval_batches, eval_inner=args.eval_inner,
                            repeats=args.repeats, max_seconds=args.max_seconds,
                            force=args.force, peak_tflops=args.peak_tflops,
                            matmul_size=args.matmul_size, measure=measure, seed=args.seed,
                            log=lambda s: print(s, flush=True))
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    report = render_report(out, args.repeats)
    print("\n" + report)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    if args.out:
        with open(args.out, "w") as f:
            f.write(report + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(to_json(out, args), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(build_parser().parse_args()))
