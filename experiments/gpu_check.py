"""One prepared accelerator check: env, search and training throughput, compile times, memory
and the training network's MFU, in one invocation that fits a lent GPU's few minutes.

    python experiments/gpu_check.py --out gpu_results            # a GPU: about 7 minutes
    python experiments/gpu_check.py --tiny --out /tmp/gc_tiny    # any CPU: the same code, small

Sections, run in `--sections` order (default: train, search, env, the scarcest numbers first;
the report lists them as env, search, train):
  env     random-playout board-steps per second (`env_throughput.bench_playouts`: a `lax.scan`
          of `--env-steps` moves per compiled call, finished games auto-reset) at each of
          `--env-batches`, for Gomoku 15x15 and Faux Go 9x9 and, beside them on the same
          device, pgx's go_9x9 and connect_four (skipped, with a note, without pgx).
  search  simulations per second of PUCT on `--search-batch` Gomoku 15x15 positions
          (`bench_search.start_positions`) x `--sims` simulations, with Gomoku's heuristic
          evaluator and with seed 001's 10x128 network in bfloat16 (random weights), each
          with our simulation loop ("gomoku_jax") and mctx's (`bench_search.measure_search`),
          and ours over mctx's (wall time).
  train   the gomoku15 AlphaZero preset after the `--set` overrides (default
          selfplay.moves=8 and optim.sgd_steps=5: self-play is timed on 8 of the preset's 32
          moves per call): a square matmul per dtype (`bench_train.measure_matmul`), self-play
          (`bench_train.measure_selfplay`), one SGD step without a loop and K steps in the
          trainer's `lax.scan` (`bench_train.measure_train`, on a buffer filled with the
          self-play call's samples as `bench_train.run_preset` fills it).
MFU = FLOP/s over the peak of `bench_train.choose_peak`: the vendor spec sheet's for the
device kind and the net's dtype, else (CPUs) the measured matmul's. A train program's FLOPs
per call come from XLA's cost analysis of the compiled program (`bench_train.xla_flops`). XLA
counts a while loop's body once, so the K-step scan's FLOPs are K x the one-step program's
(its own count is kept in the JSON). Beside it, bench_train's model count:
`PresetResult.train_net_flops_per_s` (3 forward passes per sample x `flops_per_position`)
and, for self-play, `selfplay_net_flops_per_s` (every searched node's network pass).

Every program: compile seconds and XLA's `compiled.memory_analysis()` (argument + output +
temp bytes). After each section: the device's `memory_stats()["peak_bytes_in_use"]` (the
process's peak so far; n/a on CPU).

Time: once the run has taken `--budget-seconds`, the measurements not begun are recorded as
"skipped: over budget"; `--max-seconds` bounds each measurement's calls after its compile
(the repeats are cut to fit, noted). To keep each compiled program (for XLA's counts) without
compiling it twice, the benchmark modules' `time_jitted` is wrapped while the check runs.

Output: OUT/gpu_check.json and OUT/gpu_check.md, rewritten after every measurement (a killed
run leaves what it measured; rows not reached stay "pending"); the markdown is printed last
on stdout. Every measurement runs in its own try/except (each section's set-up too): a
failure's error (the traceback's last lines) goes into the report and the run goes on. Exit
status 0 even then; 1 with `--strict` when anything failed. A progress bar with an ETA on
stderr counts the measurements (not with `--no-progress` or when stderr is not a terminal).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import importlib.metadata
import json
import pathlib
import sys
import time
import traceback
from typing import Any, Callable, Iterator, Optional, Sequence

import jax
import jax.numpy as jnp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import bench_search
import bench_train

import gomoku_jax
from gomoku_jax import progress, search
from gomoku_jax.benchmarks import env_throughput, timing
from gomoku_jax.benchmarks.timing import Measurement, describe_machine, fmt_rate
from gomoku_jax.markdown import table as markdown_table
from gomoku_jax.nets.resnet import NET_PRESETS, PolicyValueModel
from gomoku_jax.search.base import LOOPS
from gomoku_jax.search.evaluators import NetworkEvaluator
from gomoku_jax.train import replay
from gomoku_jax.train.alphazero.trainer import AlphaZero

SECTIONS = ("env", "search", "train")  # the report's order
DEFAULT_ORDER = ("train", "search", "env")  # the run's: the scarcest numbers first
PACKAGES = ("jax", "jaxlib", "jax-cuda12-plugin", "jax-cuda13-plugin", "flax", "optax", "chex",
            "orbax-checkpoint", "mctx", "pgx")
ERROR_LINES = 6  # of a traceback, kept in the report
MIB = 2 ** 20
# XLA's cost analysis counts HLO ops, not library calls: when its count of a train step is
# this many times under the model's, the convolutions went to a library (cuDNN on GPUs).
UNDERCOUNT = 5.0


@dataclasses.dataclass(frozen=True)
class Sizes:
    """What the check measures: the accelerator's sizes (`FULL`) or a CPU's (`TINY`)."""

    env_batches: tuple[int, ...]
    env_steps: int
    search_board: int
    search_batch: int
    search_sims: int
    search_net: str  # a NET_PRESETS name, run in bfloat16
    train_preset: str
    train_sets: tuple[str, ...]  # `--set` overrides applied before the command line's
    matmul_size: int  # 0: 8192 on accelerators, 2048 on CPUs (bench_train's)
    repeats: int


FULL = Sizes(env_batches=(65_536, 262_144), env_steps=32, search_board=15, search_batch=1024,
             search_sims=64, search_net="seed", train_preset="gomoku15",
             train_sets=("selfplay.moves=8", "optim.sgd_steps=5"), matmul_size=0,
             repeats=3)
# Every program of FULL at its smallest, one env batch (each program is a compile: 2-15 s on
# a 2-core CPU); the "test" preset (7x7, tiny net) at its smallest, with a 2-step scan, its
# search without root noise, symmetry or prior shaping and no synthetic examples in its
# batches (the same code, compiled in about two thirds of the time). The env playouts (batch
# 2, 4 moves) are the programs the smoke tests of bench_fauxgo.py (Faux Go and pgx's go_9x9
# on 9x9) and of the env benchmark (Gomoku 15x15) run: one process (or a shared compilation
# cache) compiles each of them once.
TINY = Sizes(env_batches=(2,), env_steps=4, search_board=7, search_batch=2,
             search_sims=4, search_net="tiny", train_preset="test",
             train_sets=("selfplay.games=2", "selfplay.moves=2", "selfplay.num_simulations=2",
                         "optim.batch_size=8", "optim.sgd_steps=2", "search.symmetry=none",
                         "search.dirichlet_fraction=0", "search.prior_shaping=off",
                         "replay.synthetic_fraction=0"),
             matmul_size=128, repeats=1)
# The search section's PUCT under --tiny: its default config but these fields, which only
# make the compiles longer (the accelerator's rows run the default config).
TINY_SEARCH_FIELDS = {"symmetry": "none", "dirichlet_fraction": 0.0, "prior_shaping": "off"}

ENV_GAMES = (  # (system, game): the env section's rows, per batch
    ("gomoku_jax", "gomoku 15x15"), ("gomoku_jax", "fauxgo 9x9"),
    ("pgx", "go_9x9"), ("pgx", "connect_four"))


# ----------------------------------------------------------------------------- compiled programs

@dataclasses.dataclass
class Program:
    """A program a benchmark helper compiled and ran: XLA's executable, and how many calls
    were timed after the warm-up (0: the warm-up alone was over the time bound)."""

    compiled: Any
    timed: int = -1


def _keeping(jitted: Any, programs: list[Program]) -> Any:
    """`jitted` as `time_jitted` uses it (`.lower(*args).compile()`), appending each
    executable it compiles to `programs`."""

    def lower(*args):
        lowered = jitted.lower(*args)

        def compile_():
            compiled = lowered.compile()
            programs.append(Program(compiled))
            return compiled

        return argparse.Namespace(compile=compile_)

    return argparse.Namespace(lower=lower)


_TIME_JITTED = timing.time_jitted
_TIMED_MODULES = (timing, bench_train, bench_search)  # `time_jitted` callers (by global name)


@contextlib.contextmanager
def keeping_programs(max_seconds: float) -> Iterator[list[Program]]:
    """Within: every `time_jitted` of the benchmark code (`timing.time_compiled`'s, hence
    `bench_playouts`', bench_train's and bench_search's) keeps its compiled program in the
    yielded list, and runs under `max_seconds` where its caller gave no bound."""
    programs: list[Program] = []

    def time_jitted(jitted, args, repeats, thread=None, max_s=None, first=None):
        out = _TIME_JITTED(_keeping(jitted, programs), args, repeats, thread,
                           max_seconds if max_s is None else max_s, first)
        programs[-1].timed = out[3]
        return out

    saved = [(module, module.time_jitted) for module in _TIMED_MODULES]
    for module, _ in saved:
        module.time_jitted = time_jitted
    try:
        yield programs
    finally:
        for module, original in saved:
            module.time_jitted = original


def memory_of(compiled: Any) -> Optional[dict]:
    """XLA's memory analysis of a compiled program in bytes: argument, output, temp, alias
    and total = argument + output + temp (None where the backend gives none)."""
    try:
        stats = compiled.memory_analysis()
    except Exception:  # not every backend implements it
        return None
    if isinstance(stats, (list, tuple)):
        stats = stats[0] if stats else None
    if stats is None:
        return None
    out = {k: getattr(stats, f"{k}_size_in_bytes", None)
           for k in ("argument", "output", "temp", "alias")}
    out["total"] = sum(out[k] or 0 for k in ("argument", "output", "temp"))
    return out


def device_peak_bytes() -> Optional[int]:
    """The first device's `memory_stats()["peak_bytes_in_use"]` (None on CPU)."""
    try:
        stats = jax.devices()[0].memory_stats()
    except Exception:
        return None
    return (stats or {}).get("peak_bytes_in_use")


def last_lines(limit: int = ERROR_LINES) -> str:
    """The last `limit` lines of the exception being handled's traceback."""
    return "\n".join(traceback.format_exc().strip().splitlines()[-limit:])


# ----------------------------------------------------------------------------- the report

@dataclasses.dataclass
class Check:
    """A run's state: its rows by section (dicts, in their JSON form), the clock against the
    budget, and where the report is written. A row's "status" is pending, ok, skipped or
    error ("note" says why)."""

    out_dir: pathlib.Path
    header: dict
    budget_s: float
    max_seconds: float
    sections: dict = dataclasses.field(
        default_factory=lambda: {s: {"rows": [], "error": None, "seconds": None,
                                     "peak_bytes_in_use": None}
                                 for s in SECTIONS})
    t0: float = dataclasses.field(default_factory=time.perf_counter)
    log: Callable[[str], None] = print
    tick: Callable[[int], None] = lambda n: None

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def over_budget(self) -> bool:
        return self.elapsed() > self.budget_s

    def failed(self) -> bool:
        return any(s["error"] or any(r["status"] == "error" for r in s["rows"])
                   for s in self.sections.values())

    def plan(self, section: str, rows: Sequence[dict]) -> list[dict]:
        """Add `rows` (pending) to `section`; returns them."""
        rows = [dict(r, status="pending", note="") for r in rows]
        self.sections[section]["rows"].extend(rows)
        return rows

    def attempt(self, row: dict, fill: Callable[[dict], Any]) -> Any:
        """`fill(row)` (it adds the measurement's fields, or marks the row skipped with a
        note), unless the budget is spent; an exception becomes the row's error. Logs,
        saves the report, ticks the bar; returns what `fill` returned (None when skipped
        or failed)."""
        result = None
        if self.over_budget():
            row.update(status="skipped", note=f"skipped: over budget ({self.elapsed():.0f} s "
                                              f"of --budget-seconds {self.budget_s:g})")
        else:
            try:
                result = fill(row)
                if row["status"] == "pending":  # `fill` may have skipped it
                    row["status"] = "ok"
            except Exception:
                row.update(status="error", note=last_lines())
        self.log(f"  {_row_label(row):<44} {row['status']:<7} "
                 f"{row['note'].splitlines()[-1] if row['note'] else ''}")
        self.save()
        self.tick(1)
        return result

    def as_json(self) -> dict:
        return {"header": self.header, "elapsed_s": self.elapsed(), "budget_s": self.budget_s,
                "failed": self.failed(), "sections": self.sections}

    def save(self) -> None:
        """Rewrite OUT/gpu_check.json and OUT/gpu_check.md."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        (self.out_dir / "gpu_check.json").write_text(json.dumps(self.as_json(), indent=1))
        (self.out_dir / "gpu_check.md").write_text(render(self) + "\n")


def _row_label(row: dict) -> str:
    keys = ("system", "game", "evaluator", "loop", "program", "batch")
    return " ".join(str(row[k]) for k in keys if k in row)


def measured(row: dict, m: Measurement, program: Optional[Program], unit: str,
             repeats: int) -> None:
    """`row` += a measurement's compile and call seconds, its rates in `unit`s per wall and
    CPU second, and its program's memory and timed calls (with a note where cut)."""
    row.update({"compile_s": m.compile_s, "wall_s": m.wall_s, "cpu_s": m.cpu_s,
                f"{unit}_per_call": m.work, f"{unit}_per_s": m.per_wall_s,
                f"{unit}_per_cpu_s": m.per_cpu_s})
    if program is not None:
        row["memory"] = memory_of(program.compiled)
        row["timed_calls"] = program.timed
        if program.timed == 0:
            row["note"] = "one call (the warm-up) over --max-seconds"
        elif program.timed < repeats:
            row["note"] = f"median of {program.timed} (--max-seconds)"


def run_section(check: Check, name: str, rows: list[dict],
                body: Callable[[Check, list[dict]], None]) -> None:
    """`body(check, rows)` with its set-up errors recorded (the rows not reached marked),
    skipped whole when the budget is spent; then the section's seconds and device peak."""
    section, t0 = check.sections[name], time.perf_counter()
    check.log(f"## {name}")
    try:
        if check.over_budget():
            for row in rows:
                check.attempt(row, lambda r: None)  # records the skip
        else:
            body(check, rows)
    except Exception:
        section["error"] = last_lines()
        check.log(f"  {name} failed: {section['error'].splitlines()[-1]}")
        for row in rows:
            if row["status"] == "pending":
                row.update(status="error", note=f"not reached: the {name} section failed")
                check.tick(1)
    section["seconds"] = time.perf_counter() - t0
    section["peak_bytes_in_use"] = device_peak_bytes()
    check.save()


# ----------------------------------------------------------------------------- env

def env_rows(sizes: Sizes) -> list[dict]:
    return [{"system": system, "game": game, "batch": b, "moves_per_call": sizes.env_steps}
            for system, game in ENV_GAMES for b in sizes.env_batches]


def env_makers() -> dict[str, Callable[[], tuple[Callable, Callable]]]:
    """game -> () -> (init, auto-resetting step) of one board."""

    def ours(game_id: str, size: int):
        def make():
            env = gomoku_jax.make(game_id, board_size=size)
            return env.init, gomoku_jax.auto_reset(env.step, env.init)
        return make

    def theirs(game_id: str):
        def make():
            import pgx
            import pgx.experimental

            env = pgx.make(game_id)
            return env.init, pgx.experimental.auto_reset(env.step, env.init)
        return make

    return {"gomoku 15x15": ours("gomoku", 15), "fauxgo 9x9": ours("fauxgo", 9),
            "go_9x9": theirs("go_9x9"), "connect_four": theirs("connect_four")}


def pgx_missing() -> str:
    """'' if pgx imports, else the note its rows get."""
    try:
        import pgx.experimental  # noqa: F401
    except ImportError as e:
        return f"skipped: pgx not installed (pip install pgx): {e}"
    return ""


def run_env(check: Check, rows: list[dict], sizes: Sizes, repeats: int, seed: int) -> None:
    makers, made, missing = env_makers(), {}, pgx_missing()

    def fill(row):
        if row["system"] == "pgx" and missing:
            row.update(status="skipped", note=missing)
            return
        if row["game"] not in made:
            made[row["game"]] = makers[row["game"]]()
        init, step = made[row["game"]]
        with keeping_programs(check.max_seconds) as programs:
            m = env_throughput.bench_playouts(f"{row['system']} {row['game']}", init, step,
                                              row["batch"], row["moves_per_call"], repeats,
                                              seed)
        measured(row, m, programs[-1], "steps", repeats)

    for row in rows:
        check.attempt(row, fill)


# ----------------------------------------------------------------------------- search

def network_label(sizes: Sizes) -> str:
    net = NET_PRESETS[sizes.search_net]
    return f"network {net.blocks}x{net.channels} bf16"


def search_rows(sizes: Sizes) -> list[dict]:
    return [{"evaluator": evaluator, "loop": loop, "batch": sizes.search_batch,
             "simulations": sizes.search_sims}
            for evaluator in ("heuristic", network_label(sizes)) for loop in LOOPS]


def bf16_network(env, preset: str, seed: int) -> tuple[NetworkEvaluator, Any]:
    """(evaluator, variables) of NET_PRESETS[preset] in bfloat16, random weights."""
    config = dataclasses.replace(NET_PRESETS[preset], dtype="bfloat16")
    model = PolicyValueModel.for_env(config, env)
    return NetworkEvaluator(model), model.init(jax.random.key(seed))


def run_search(check: Check, rows: list[dict], sizes: Sizes, repeats: int, seed: int,
               fields: Optional[dict] = None) -> None:
    """The search rows, PUCT's default config with `fields` changed."""
    env = gomoku_jax.make("gomoku", board_size=sizes.search_board)
    states = bench_search.start_positions(env, sizes.search_batch, jax.random.key(seed))
    evaluators = {"heuristic": bench_search.make_evaluator(env, "heuristic"),
                  network_label(sizes): bf16_network(env, sizes.search_net, seed)}

    def fill(row):
        algorithm = search.make("puct", loop=row["loop"], **(fields or {}))
        refusal = bench_search.tree_refusal(env, states, row["simulations"], algorithm)
        if refusal:
            row.update(status="skipped", note=f"skipped: {refusal}")
            return
        evaluator, params = evaluators[row["evaluator"]]
        with keeping_programs(check.max_seconds) as programs:
            run = bench_search.measure_search(env, "puct", row["evaluator"], evaluator, params,
                                              states, row["simulations"], repeats,
                                              check.max_seconds, row["loop"], fields)
        row["ms_per_move"] = 1e3 * run.result.wall_s
        measured(row, run.result, programs[-1], "sims", repeats)

    for row in rows:
        check.attempt(row, fill)
    vs_mctx(rows)


def vs_mctx(rows: list[dict]) -> None:
    """Each row's sims/s (wall) over the mctx loop's with the same evaluator, in place
    (None where either was not measured)."""
    mctx_rate = {r["evaluator"]: r.get("sims_per_s") for r in rows if r["loop"] == "mctx"}
    for r in rows:
        ref = mctx_rate.get(r["evaluator"])
        r["vs_mctx"] = r["sims_per_s"] / ref if ref and r.get("sims_per_s") else None


# ----------------------------------------------------------------------------- train

def train_config(sizes: Sizes, assignments: Sequence[str]):
    """The train section's preset after `sizes.train_sets` and then `assignments`."""
    name = sizes.train_preset
    return bench_train.preset_configs([name], [*sizes.train_sets, *assignments])[name]


def train_rows(config) -> list[dict]:
    sp, opt = config.selfplay, config.optim
    dtypes = sorted({"float32", config.net.dtype})
    return ([{"program": f"matmul {dt}", "dtype": dt} for dt in dtypes]
            + [{"program": "self-play", "size": f"B x T x S = {sp.games} x {sp.moves} x "
                                                f"{sp.num_simulations}"},
               {"program": "train, 1 step (no loop)", "size": f"1 x {opt.batch_size}",
                "steps": 1},
               {"program": f"train, {opt.sgd_steps} steps (lax.scan)",
                "size": f"{opt.sgd_steps} x {opt.batch_size}", "steps": opt.sgd_steps}])


def run_train(check: Check, rows: list[dict], config, sizes: Sizes, repeats: int,
              seed: int) -> None:
    trainer = AlphaZero(config)
    state = trainer.init(seed)
    device_kind = jax.devices()[0].device_kind
    section = check.sections["train"]
    section.update(preset=sizes.train_preset, config=config.to_dict(),
                   net=bench_train.net_label(config),
                   flops_per_position=float(trainer.model.flops_per_position()))
    matmul_rows, (sp_row, step_row, scan_row) = rows[:-3], rows[-3:]
    matmul: dict[str, dict] = {}

    def fill_matmul(row):
        size = sizes.matmul_size or (2048 if jax.default_backend() == "cpu" else 8192)
        m = bench_train.measure_matmul(row["dtype"], size,
                                       max(repeats, bench_train.MATMUL_CALLS))
        matmul[row["dtype"]] = m
        row.update(m)

    for row in matmul_rows:
        check.attempt(row, fill_matmul)
    dtype = config.net.dtype
    try:
        peak = bench_train.choose_peak(device_kind, dtype, matmul, None)
        section["peak"] = dataclasses.asdict(peak) | {"label": peak.label()}
    except ValueError:  # no spec sheet figure and no matmul measured: no MFU
        peak = None
    symmetries = trainer.env.num_symmetries if config.search.symmetry == "average" else 1
    result = bench_train.PresetResult(
        sizes.train_preset, config, device_kind, section["flops_per_position"], symmetries,
        trainer.sgd_unroll, peak,
        bench_train.measured_rate(matmul, dtype)[0] if matmul else None)

    def add_flops(row: dict, model_rate: float, per_call: Optional[float], wall_s: float):
        row.update(model_flops_per_s=model_rate, xla_flops_per_call=per_call,
                   flops_per_s=per_call / wall_s if per_call else None)
        row["model_mfu"] = model_rate / peak.flops_per_s if peak else None
        row["mfu"] = row["flops_per_s"] / peak.flops_per_s if peak and per_call else None
        if per_call and per_call < model_rate * wall_s / UNDERCOUNT:
            # seen on an H100: 35.8 GFLOP per 1,024-sample step against the model's 4,100
            row["note"] = "; ".join(filter(None, [row["note"], (
                "XLA's count misses the library calls (cuDNN's convolutions on a GPU): the "
                "model count is the one to read")]))

    def fill_selfplay(row):
        with keeping_programs(check.max_seconds) as programs:
            m, samples = bench_train.measure_selfplay(trainer, state, repeats, seed,
                                                      check.max_seconds)
        result.selfplay = m
        measured(row, m, programs[-1], "positions", repeats)
        row["simulations_per_s"] = result.simulations_per_call / m.wall_s
        # XLA's count of self-play is not used: its search and moves are loops, whose
        # bodies XLA counts once.
        add_flops(row, result.selfplay_net_flops_per_s, None, m.wall_s)
        return samples

    samples = check.attempt(sp_row, fill_selfplay)
    # Every sample of the call, finished game or not, as run_preset fills the buffer: only
    # the cost matters here.
    buffer = None if samples is None else jax.jit(replay.add)(
        state.buffer, samples, jnp.ones(samples.value.shape, bool))
    one_step_flops: list[float] = []  # XLA's count of one SGD step, once measured

    def fill_train(row, loop: bool):
        if buffer is None:
            raise RuntimeError("no replay buffer: the self-play measurement did not run")
        with keeping_programs(check.max_seconds) as programs:
            m = bench_train.measure_train(trainer, state, buffer, repeats, seed,
                                          check.max_seconds, loop=loop)
        measured(row, m, programs[-1], "samples", repeats)
        counted = bench_train.xla_flops(programs[-1].compiled)
        row["xla_flops_program"] = counted
        if not loop:
            result.train_step = m
            one_step_flops.extend([counted] if counted else [])
            add_flops(row, bench_train.TRAIN_PASSES * result.fpp * m.per_wall_s, counted,
                      m.wall_s)
            return
        result.train = m
        per_call = row["steps"] * one_step_flops[0] if one_step_flops else counted
        if not one_step_flops and counted:
            row["note"] = "; ".join(filter(None, [
                row["note"], "XLA count of the scan itself (its body counted once)"]))
        add_flops(row, result.train_net_flops_per_s, per_call, m.wall_s)

    check.attempt(step_row, lambda row: fill_train(row, loop=False))
    check.attempt(scan_row, lambda row: fill_train(row, loop=True))


# ----------------------------------------------------------------------------- markdown

def _s(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.1f}" if x >= 1 else f"{x:.2f}"


def _ms(x: Optional[float]) -> str:
    return "-" if x is None else f"{1e3 * x:.1f}"


def _mib(memory: Optional[dict]) -> str:
    return "n/a" if not memory else f"{memory['total'] / MIB:.1f}"


def _rate(x: Optional[float]) -> str:
    return "-" if x is None else fmt_rate(x)


def _pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{100 * x:.3g} %"


def _cell(text: str) -> str:
    """Text in one table cell: no pipes or line breaks."""
    return text.replace("|", "\\|").replace("\n", " / ")


def _status(row: dict) -> str:
    return _cell(row["note"] or ("" if row["status"] == "ok" else row["status"]))


def env_table(rows: Sequence[dict]) -> str:
    header = ["system", "game", "batch", "moves/call", "compile s", "ms/call", "steps/s (wall)",
              "steps/CPU-s", "program MiB", "note"]
    return markdown_table(header, [
        [r["system"], r["game"], str(r["batch"]), str(r["moves_per_call"]),
         _s(r.get("compile_s")), _ms(r.get("wall_s")), _rate(r.get("steps_per_s")),
         _rate(r.get("steps_per_cpu_s")), _mib(r.get("memory")), _status(r)] for r in rows])


def search_table(rows: Sequence[dict]) -> str:
    header = ["evaluator", "loop", "batch", "simulations", "compile s", "ms/move",
              "sims/s (wall)", "sims/CPU-s", "vs mctx loop (wall)", "program MiB", "note"]
    return markdown_table(header, [
        [r["evaluator"], r["loop"], str(r["batch"]), str(r["simulations"]),
         _s(r.get("compile_s")), _ms(r.get("wall_s")), _rate(r.get("sims_per_s")),
         _rate(r.get("sims_per_cpu_s")),
         "-" if r.get("vs_mctx") is None else f"{r['vs_mctx']:.2f}x", _mib(r.get("memory")),
         _status(r)] for r in rows])


def train_table(rows: Sequence[dict]) -> str:
    header = ["program", "size", "compile s", "ms/call", "rate (wall)", "XLA GFLOP/call",
              "FLOP/s", "MFU (XLA count)", "MFU (model count)", "program MiB", "note"]
    lines = []
    for r in rows:
        if r["program"].startswith("matmul"):
            size = r.get("size", "")
            lines.append([r["program"], f"{size}^3" if size else "", "-",
                          _ms(r.get("best_wall_s")), "-", "-",
                          bench_train.fmt_flops(r["flops_per_s"]) if "flops_per_s" in r
                          else "-", "-", "-", "-", _status(r)])
            continue
        unit = next((u for u in ("positions", "samples") if f"{u}_per_s" in r), None)
        rate = f"{fmt_rate(r[f'{unit}_per_s'])} {unit}/s" if unit else "-"
        if "simulations_per_s" in r:
            rate += f", {fmt_rate(r['simulations_per_s'])} sims/s"
        flops = r.get("xla_flops_per_call")
        lines.append([r["program"], r.get("size", ""), _s(r.get("compile_s")),
                      _ms(r.get("wall_s")), rate, "-" if not flops else f"{flops / 1e9:.4g}",
                      bench_train.fmt_flops(r["flops_per_s"]) if r.get("flops_per_s")
                      else "-", _pct(r.get("mfu")), _pct(r.get("model_mfu")),
                      _mib(r.get("memory")), _status(r)])
    return markdown_table(header, lines)


def render_header(check: Check) -> list[str]:
    h = check.header
    versions = ", ".join(f"{k} {v}" for k, v in h["versions"].items() if v)
    args = " ".join(f"--{k.replace('_', '-')}={v}" for k, v in h["args"].items())
    return [f"# GPU check, {h['date']}", "",
            f"- machine: {h['machine']}", f"- device: {h['device_kind']} "
            f"({h['device_count']} device(s), backend {h['backend']})",
            f"- versions: {versions}", f"- arguments: {args}",
            f"- elapsed: {check.elapsed():.0f} s of --budget-seconds {check.budget_s:g}"]


def render_section(check: Check, name: str) -> list[str]:
    section = check.sections[name]
    rows = section["rows"]
    table = {"env": env_table, "search": search_table, "train": train_table}[name](rows)
    peak = section["peak_bytes_in_use"]
    seconds = section["seconds"]
    lines = ["", f"## {name}", ""]
    if name == "train" and "net" in section:
        lines += [f"Preset {section['preset']} (net {section['net']}, "
                  f"{bench_train.fmt_flops(section['flops_per_position']).replace('/s', '')} "
                  f"per position, model count); MFU against "
                  f"{section['peak']['label'] if 'peak' in section else 'n/a'}.", ""]
    lines += [table, "",
              f"Section: {'-' if seconds is None else f'{seconds:.0f} s'}; device "
              f"peak_bytes_in_use after it: "
              f"{'n/a' if peak is None else f'{peak / MIB:.0f} MiB'}."]
    if section["error"]:
        lines += ["", "Section error:", "", "```", section["error"], "```"]
    return lines


NOTES = ("Rates exclude compile time (each program compiled once, a warm-up call, then the "
         "median of the timed calls). program MiB: XLA's memory analysis, argument + output "
         "+ temp. env: random playouts, board-steps per call = batch x moves/call. search: "
         "PUCT, sims per call = batch x simulations; vs mctx loop: sims/s over the mctx "
         "loop's with the same evaluator. train: self-play positions = B x T, sims = B x T x "
         "S; train samples = steps x batch. XLA count: cost analysis of the compiled program "
         "(the scan's as K x the one-step program's: XLA counts a loop body once); model "
         "count: 3 forward passes per sample (self-play: every searched node's pass) x the "
         "net's FLOPs per position.")


def render(check: Check) -> str:
    lines = render_header(check)
    for name in SECTIONS:
        lines += render_section(check, name)
    return "\n".join(lines + ["", NOTES])


# ----------------------------------------------------------------------------- CLI

def versions() -> dict[str, Optional[str]]:
    """Installed versions of PACKAGES (None: not installed)."""
    out = {}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def make_header(args: argparse.Namespace) -> dict:
    return {"machine": describe_machine(), "backend": jax.default_backend(),
            "device_kind": jax.devices()[0].device_kind, "device_count": jax.device_count(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "python": sys.version.split()[0], "versions": versions(), "args": vars(args)}


def sizes_of(args: argparse.Namespace) -> Sizes:
    """FULL or TINY with the command line's overrides."""
    sizes = TINY if args.tiny else FULL
    changes = {k: v for k, v in (
        ("env_batches", args.env_batches and tuple(
            timing.parse_int_list(args.env_batches, "--env-batches"))),
        ("env_steps", args.env_steps), ("search_batch", args.search_batch),
        ("search_sims", args.sims), ("repeats", args.repeats)) if v is not None}
    if any(isinstance(v, int) and v < 1 for v in changes.values()):
        raise SystemExit("error: --env-steps, --search-batch, --sims and --repeats must be "
                         ">= 1")
    return dataclasses.replace(sizes, **changes)


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="folder for gpu_check.json and .md")
    parser.add_argument("--tiny", action="store_true",
                        help="every program at its smallest, for a CPU: the check of the check")
    parser.add_argument("--sections", default=",".join(DEFAULT_ORDER),
                        help=f"which of {', '.join(SECTIONS)}, in the order run "
                             f"(default: %(default)s)")
    parser.add_argument("--budget-seconds", type=float, default=420.0,
                        help="skip the measurements not begun once the run has taken this "
                             "long (default: %(default)s)")
    parser.add_argument("--max-seconds", type=float, default=20.0,
                        help="time per measurement after its compile: repeats are cut to fit "
                             "(default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=None,
                        help=f"timed calls, median reported (default {FULL.repeats}; tiny "
                             f"{TINY.repeats})")
    parser.add_argument("--env-batches", default=None,
                        help=f"env batch sizes (default {','.join(map(str, FULL.env_batches))}"
                             f"; tiny {','.join(map(str, TINY.env_batches))})")
    parser.add_argument("--env-steps", type=int, default=None,
                        help=f"moves per env call (default {FULL.env_steps}; tiny "
                             f"{TINY.env_steps})")
    parser.add_argument("--search-batch", type=int, default=None,
                        help=f"search batch (default {FULL.search_batch}; tiny "
                             f"{TINY.search_batch})")
    parser.add_argument("--sims", type=int, default=None,
                        help=f"search simulations (default {FULL.search_sims}; tiny "
                             f"{TINY.search_sims})")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                        dest="assignments",
                        help=f"override a field of the train preset, after the defaults "
                             f"({' '.join(FULL.train_sets)}; repeatable)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 1 when any measurement or section failed")
    progress.add_argument(parser)
    return parser


def main(args: argparse.Namespace) -> int:
    sizes = sizes_of(args)
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    if not sections or any(s not in SECTIONS for s in sections) or \
            len(set(sections)) < len(sections):
        raise SystemExit(f"error: --sections takes {', '.join(SECTIONS)} (each once), got "
                         f"{args.sections!r}")
    if not args.max_seconds > 0:
        raise SystemExit("error: --max-seconds must be > 0")
    try:
        config = train_config(sizes, args.assignments)
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    repeats = sizes.repeats
    print(f"# GPU check ({describe_machine()})", flush=True)
    check = Check(pathlib.Path(args.out), make_header(args), args.budget_seconds,
                  args.max_seconds)
    check.header["sizes"] = dataclasses.asdict(sizes)
    planned = {"env": check.plan("env", env_rows(sizes) if "env" in sections else []),
               "search": check.plan("search", search_rows(sizes) if "search" in sections
                                    else []),
               "train": check.plan("train", train_rows(config) if "train" in sections
                                   else [])}
    bodies = {
        "env": lambda c, rows: run_env(c, rows, sizes, repeats, args.seed),
        "search": lambda c, rows: run_search(c, rows, sizes, repeats, args.seed,
                                             TINY_SEARCH_FIELDS if args.tiny else None),
        "train": lambda c, rows: run_train(c, rows, config, sizes, repeats, args.seed)}
    check.save()
    with progress.bar(sum(len(rows) for rows in planned.values()), "gpu_check", "measurement",
                      enabled=not args.no_progress) as bar:
        check.log, check.tick = progress.printer(bar), bar.update
        for name in sections:
            run_section(check, name, planned[name], bodies[name])
    check.log, check.tick = print, lambda n: None
    check.save()
    print("\n" + render(check))
    return 1 if args.strict and check.failed() else 0


if __name__ == "__main__":
    sys.exit(main(build_parser().parse_args()))
