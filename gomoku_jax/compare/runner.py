"""Running a comparison: every (arm, seed) trained in segments, each segment's checkpoint
rated against the references, everything on disk so a killed comparison continues.

    results = run(spec, "cmp/gumbel-vs-puct")      # spec: a `spec.Comparison`

The output directory holds `comparison.json` (the spec; a rerun must give the same one),
`runs/<arm>/seed<S>/` (ordinary run directories of `gomoku-jax train`: resumable,
loadable with `--checkpoint`) and `matches.jsonl` (one line per rating match, written as
it finishes). A run trains to its first rating point and stops after a checkpoint (the
run driver's `stop_after`, or `stop_when` for a seconds budget), the checkpoint plays the
references, then the run resumes to the next point; the runs go one after the other (one
process: the compiled iteration of a config is reused across its segments). Rerunning
the command skips every match already in `matches.jsonl` and every segment already
trained, so a killed comparison loses at most the segment it was in.

Rating: the checkpoint's network plays `spec.eval_agent` (the same agent spec for every
arm, so arms differ only in the network their training produced) against each reference,
`spec.games` games on the game's default openings with both colours (`eval.arena`).
Match k of point p uses the key fold_in(fold_in(key(spec.seed), p), k) for every run:
common random numbers, so runs at one point differ by their networks, not their dice.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any, Optional

import jax

from gomoku_jax import progress as progress_bar
from gomoku_jax.agents.registry import AGENTS
from gomoku_jax.agents.specs import TRAINED, make_agent, parse_spec
from gomoku_jax.compare import ladder
from gomoku_jax.compare.report import analyze
from gomoku_jax.compare.spec import Arm, Comparison
from gomoku_jax.eval.arena import per_opening_colour, run_match
from gomoku_jax.eval.tournament import run_tournament
from gomoku_jax.players import load as load_player
from gomoku_jax.players import run_dir as rd
from gomoku_jax.train.driver import train

SPEC_FILE = "comparison.json"
MATCHES_FILE = "matches.jsonl"
RUNS_DIR = "runs"
POOL = "pool"  # the `run` of the references' matches against each other


def run_path(runs: pathlib.Path, arm: Arm, seed: int) -> pathlib.Path:
    """The run directory of (arm, seed) under the comparison's `runs` directory."""
    return pathlib.Path(runs) / arm.name / f"seed{seed}"


def checkpoint_label(arm: str, seed: int, point: int) -> str:
    """The Elo fit's name of a rated checkpoint: 'arm/seedS/pP' (P from 1)."""
    return f"{arm}/seed{seed}/p{point}"


def read_records(run_dir: pathlib.Path, upto: Optional[int] = None) -> list[dict]:
    """The run's metrics records (iterations 1..`upto`, default all), in order."""
    path = pathlib.Path(run_dir) / rd.METRICS_FILE
    records = []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a kill
            if upto is None or record.get("iteration", 0) <= upto:
                records.append(record)
    return records


def clock(records: list[dict]) -> float:
    """Training seconds of a run from its metrics records: the iterations' wall times
    (self-play and learning; not checkpoints, arenas or rating) less the time JAX spent
    compiling them (`compile_seconds`), a cost that depends on the compilation cache and
    on which runs shared the process rather than on the arm."""
    return float(sum(r["seconds"] - r.get("compile_seconds", 0.0) for r in records))


class Store:
    """`matches.jsonl`: the rating matches done, appended one line each as they finish."""

    def __init__(self, path: pathlib.Path):
        self.path = pathlib.Path(path)
        self.rows: list[dict] = []
        if self.path.exists():
            for line in self.path.read_text().splitlines():
                try:
                    self.rows.append(json.loads(line))
                except json.JSONDecodeError:
                    continue  # a line cut short by a kill: that match is played again
        self.done = {self._key(r) for r in self.rows}

    @staticmethod
    def _key(row: dict) -> tuple:
        return row["run"], row.get("seed"), row.get("point"), row["a"], row["b"]

    def has(self, run: str, seed: Optional[int], point: Optional[int], a: str, b: str) -> bool:
        return (run, seed, point, a, b) in self.done

    def add(self, row: dict) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps(row) + "\n")
        self.rows.append(row)
        self.done.add(self._key(row))


def _row(match: Any, **where: Any) -> dict:
    """A `matches.jsonl` line: where (run, seed, point, ...), A and B, A's wins, draws and
    losses, A's record as the game's first mover (`as_first`) and as its second
    (`as_second`), `distinct_games` (how many of the games differ), the game pairs' score
    counts and the mean length. Rows written before `as_first` / `as_second` /
    `distinct_games` existed still load (`stats.expand`)."""
    return {**where, "a": match.agent_a, "b": match.agent_b, "wins": match.wins,
            "draws": match.draws, "losses": match.losses,
            "as_first": match.as_first.to_dict(), "as_second": match.as_second.to_dict(),
            "distinct_games": match.distinct_games, "pairs": list(match.pairs),
            "mean_length": match.mean_length}


def prepare(spec: Comparison, out: pathlib.Path) -> Any:
    """Check the spec against the directory and every arm's config before anything runs;
    returns the game. ValueError: a directory of another comparison, an arm whose config
    fails, arms on different games (one Elo scale needs one game), a bad reference."""
    out = pathlib.Path(out)
    spec_path = out / SPEC_FILE
    if spec_path.exists():
        saved = json.loads(spec_path.read_text())
        try:  # a spec saved before a field existed has that field's default
            saved = Comparison.from_dict(saved).to_dict()
        except (TypeError, ValueError, KeyError):
            pass
        check_same(saved, spec.to_dict(), out)
    env = spec.base_config().env()
    for arm in spec.arms:
        try:
            config = spec.config(arm, spec.seeds[0])
        except ValueError as e:
            raise ValueError(f"arm {arm.name}: {e}") from None
        if config.env().describe() != env.describe():
            raise ValueError(f"arm {arm.name} plays {config.env().describe()}, not the base "
                             f"game {env.describe()}: one Elo scale needs one game")
    for ref in spec.references:
        make_agent(ref).bind(env)  # ValueError naming the bad spec
    if spec.ladder and (out / ladder.LADDER_FILE).exists():
        ladder.for_comparison(spec, env, out)  # ValueError: calibrated for something else
    name = parse_spec(spec.eval_agent)[0]
    if name != TRAINED and name not in AGENTS:
        raise ValueError(f"--eval-agent {spec.eval_agent!r}: unknown agent {name!r}; agents: "
                         f"{', '.join([TRAINED, *AGENTS])}")
    out.mkdir(parents=True, exist_ok=True)
    spec_path.write_text(json.dumps(spec.to_dict(), indent=1))
    return env


def check_same(saved: dict, given: dict, out: pathlib.Path) -> None:
    """ValueError unless `given` is the comparison `saved` describes, or the same with arms
    added after its own (their runs join the same Elo scale)."""
    changed = sorted(k for k in set(saved) | set(given)
                     if k != "arms" and saved.get(k) != given.get(k))
    if given["arms"][:len(saved["arms"])] != saved["arms"]:
        changed.append("arms (new arms may only come after the saved ones)")
    if changed:
        raise ValueError(f"{out} holds another comparison ({', '.join(changed)} differ); "
                         f"rerun it with its own arguments (see {out / SPEC_FILE}) or use "
                         f"a new directory")


def saved_steps(run_dir: pathlib.Path) -> list[int]:
    """The steps of the run's checkpoints, in order ([] for none)."""
    if not rd.has_checkpoints(run_dir):
        return []
    return sorted(int(s) for s in rd.manager(run_dir, read_only=True).all_steps())


def budget_reached(records: list[dict], target: float) -> bool:
    """Whether a seconds budget `target` stops a run after the last of its metrics
    `records` (iterations 1..n, in order): when the next iteration, if it takes as long as
    the last one did (its seconds less its compilation), would end past `target`:
    clock(records) + (seconds - compile_seconds of the last) > target. So a run stops
    *before* it would cross its budget, at most about one iteration short of it; only a
    first iteration longer than the whole budget (it always runs) ends past it. False
    without records."""
    if not records:
        return False
    last = records[-1]
    return clock(records) + (last["seconds"] - last.get("compile_seconds", 0.0)) > target


def reach(spec: Comparison, config: Any, run_dir: pathlib.Path, target: float) -> int:
    """The step of `run_dir`'s checkpoint at the budget point `target`, after training up
    to it if no saved checkpoint is there yet: for an iteration budget the checkpoint at
    `target`; for seconds the first at which `budget_reached` stops (the run's last if it
    ended before): a point's training clock passes its target only when an iteration
    takes longer than the one before it did, or when the run's first iteration alone is
    longer than the target. Runs rated by an earlier comparison are not trained again.

    Raises:
      ValueError: the run went past `target` without keeping a checkpoint there.
    """
    steps = saved_steps(run_dir)
    if spec.budget.kind == "iterations":
        if int(target) not in steps:
            if steps and steps[-1] > target:
                raise ValueError(f"{run_dir} has no checkpoint at iteration {int(target)} "
                                 f"(it has {steps}): it was not trained by this comparison")
            train(config, run_dir, progress=False, stop_after=int(target))
        return int(target)
    records = read_records(run_dir, steps[-1] if steps else 0)
    for step in steps:
        if budget_reached([r for r in records if r["iteration"] <= step], target):
            return step
    if steps and steps[-1] >= config.run.iterations:
        return steps[-1]  # the run ended before its clock reached the target

    def stop(iteration: int, record: dict) -> bool:
        records.append(record)
        return budget_reached(records, target)

    train(config, run_dir, progress=False, stop_when=stop)
    return saved_steps(run_dir)[-1]


def rate_pool(env: Any, references: list, key: jax.Array, g: int, store: Store) -> None:
    """The references against each other (a round robin, `key`), unless `store` has it."""
    pairs = [(a, b) for i, (a, _) in enumerate(references) for b, _ in references[i + 1:]]
    if all(store.has(POOL, None, None, a, b) for a, b in pairs) or len(references) < 2:
        return
    for m in run_tournament(env, references, key, g).matches:
        if not store.has(POOL, None, None, m.agent_a, m.agent_b):
            store.add(_row(m, run=POOL, seed=None, point=None))


def rate(spec: Comparison, env: Any, references: list, key: jax.Array, g: int, store: Store,
         run_dir: pathlib.Path, step: int, where: dict) -> None:
    """The checkpoint `step` of `run_dir` plays `spec.eval_agent` against each reference
    not yet in `store` (match k with `fold_in(key, k)`); `where`: its run, seed, point."""
    label = checkpoint_label(where["run"], where["seed"], where["point"])
    seconds = clock(read_records(run_dir, step))
    player = load_player(run_dir, step)
    agent = make_agent(spec.eval_agent, player).bind(env)
    params = player.params_for(agent)
    for k, (ref, ref_agent) in enumerate(references):
        if not store.has(where["run"], where["seed"], where["point"], label, ref):
            m = run_match(env, agent, ref_agent, jax.random.fold_in(key, k), g,
                          params_a=params, names=(label, ref))
            store.add(_row(m, **where, iteration=step, seconds=seconds))


def run(spec: Comparison, out: str | pathlib.Path, *, runs: Optional[str | pathlib.Path] = None,
        progress: bool = True) -> dict:
    """Train and rate everything `spec` asks for that `out` doesn't hold yet; returns the
    analysis (`report.analyze`), also written by the CLI as JSON, markdown and a plot.

    With `spec.ladder` the references are a ladder's candidates (`compare.ladder`): they
    are calibrated as the checkpoints need them (`ladder.json`, calibration matches also in
    `matches.jsonl` as the pool's), each checkpoint walks the ladder (its match against
    candidate k at point p keyed by (spec.seed, p, k) only: common random numbers across
    runs, as with fixed references), the last point's checkpoints play a round robin (`ROUND_ROBIN`
    rows), the analysis is over the candidates that played, and `analysis["ladder"]` holds
    the ladder (rungs, holes, checkpoints out of range).

    Args:
      runs: where the run directories are (default `out/runs`). Another comparison's runs,
        with the same arms, seeds and budget, are rated without training again (e.g. with
        another `eval_agent` or other references).
    Raises:
      ValueError: see `prepare`; a run's own errors (a bad override value) name the arm.
    """
    out = pathlib.Path(out)
    runs = pathlib.Path(runs) if runs is not None else out / RUNS_DIR
    env = prepare(spec, out)
    store = Store(out / MATCHES_FILE)
    g = per_opening_colour(spec.games, len(env.default_openings()))
    agents = {r: make_agent(r).bind(env) for r in spec.references}
    references = list(agents.items())
    targets = spec.budget.targets()
    pending = [(arm, seed) for arm in spec.arms for seed in spec.seeds]
    bar = progress_bar.bar(total=1 + len(pending) * len(targets) + int(spec.ladder),
                           desc="compare", unit="point", enabled=progress)
    key = jax.random.key(spec.seed)
    lad = ladder.for_comparison(spec, env, out) if spec.ladder else None
    key_ladder = jax.random.fold_in(key, 10**6)

    def play_pool(a: str, b: str) -> Any:
        return run_match(env, agents[a], agents[b], ladder.pair_key(key_ladder, a, b), g,
                         names=(a, b))

    def store_pool(m: Any) -> None:
        if not store.has(POOL, None, None, m.agent_a, m.agent_b):
            store.add(_row(m, run=POOL, seed=None, point=None))

    def status(text: str) -> None:
        bar.set_description(f"compare: {text}")

    def scores_of(run_name: str, seed: int, point: int) -> dict[str, float]:
        label = checkpoint_label(run_name, seed, point)
        return {r["b"]: (r["wins"] + 0.5 * r["draws"]) / max(
            r["wins"] + r["draws"] + r["losses"], 1) for r in store.rows
            if (r["run"], r.get("seed"), r.get("point"), r["a"]) == (run_name, seed, point,
                                                                      label)}

    try:
        status("references")
        if lad is not None:
            lad.start(play_pool, store_pool, status)
        else:
            rate_pool(env, references, key_ladder, g, store)
        bar.update(1)
        for arm, seed in pending:
            config = spec.config(arm, seed)
            path = run_path(runs, arm, seed)
            for p, target in enumerate(targets, 1):
                label = checkpoint_label(arm.name, seed, p)
                where = dict(run=arm.name, seed=seed, point=p)
                key_p = jax.random.fold_in(key, p)

                def step_here() -> int:
                    status(f"{arm.name} seed {seed} → point {p}")
                    try:
                        return reach(spec, config, path, target)
                    except ValueError as e:
                        raise ValueError(f"arm {arm.name}, seed {seed}: {e}") from None

                if lad is not None:
                    if label not in lad.checkpoints:
                        step: list[int] = []

                        def play_rung(ref: str) -> float:
                            if not step:
                                step.append(step_here())
                            k = spec.references.index(ref)
                            rate(spec, env, [(ref, agents[ref])], jax.random.fold_in(key_p, k),
                                 g, store, path, step[0], where)
                            return scores_of(arm.name, seed, p)[ref]

                        ladder.rate_checkpoint(
                            lad, label, scores_of(arm.name, seed, p),
                            scores_of(arm.name, seed, p - 1) if p > 1 else None, play_rung,
                            play_pool, store_pool, status)
                elif not all(store.has(arm.name, seed, p, label, r) for r in spec.references):
                    step = step_here()
                    status(f"{arm.name} seed {seed} point {p} rating")
                    rate(spec, env, references, key_p, g, store, path, step, where)
                bar.update(1)
        if lad is not None:
            _round_robin(spec, env, store, runs, pending, len(targets), g,
                         jax.random.fold_in(key, 10**6 + 1), status)
            bar.update(1)
    finally:
        bar.close()
    if lad is None:
        return analyze(spec, store.rows)
    played = {n for r in store.rows for n in (r["a"], r["b"])}
    used = tuple(c for c in spec.references if c in played) or spec.references[:1]
    analysis = analyze(dataclasses.replace(spec, references=used), store.rows)
    analysis["spec"] = spec.to_dict()
    analysis["ladder"] = lad.to_dict()
    return analysis


ROUND_ROBIN = "round-robin"  # the `run` of the last point's checkpoints' games


def _round_robin(spec: Comparison, env: Any, store: Store, runs: pathlib.Path,
                 pending: list, point: int, g: int, key: jax.Array, status) -> None:
    """Every pair of the checkpoints of rating point `point` plays a match (eval agent
    against eval agent, the pair's key `ladder.pair_key(key, a, b)`), unless `store` has
    it; rows with run `ROUND_ROBIN` (seed and point None: neither is a rating row)."""
    labels = [(checkpoint_label(arm.name, seed, point), arm, seed) for arm, seed in pending]
    pairs = [(a, b) for i, a in enumerate(labels) for b in labels[i + 1:]
             if not store.has(ROUND_ROBIN, None, None, a[0], b[0])]
    loaded: dict[str, tuple] = {}

    def player(label: str, arm: Arm, seed: int) -> tuple:
        if label not in loaded:
            step = next(r["iteration"] for r in store.rows if r["a"] == label
                        and r.get("iteration") is not None)
            net = load_player(run_path(runs, arm, seed), step)
            agent = make_agent(spec.eval_agent, net).bind(env)
            loaded[label] = (agent, net.params_for(agent))
        return loaded[label]

    for (la, arm_a, seed_a), (lb, arm_b, seed_b) in pairs:
        status(f"round robin {la} vs {lb}")
        (agent_a, params_a), (agent_b, params_b) = (player(la, arm_a, seed_a),
                                                    player(lb, arm_b, seed_b))
        m = run_match(env, agent_a, agent_b, ladder.pair_key(key, la, lb), g,
                      params_a=params_a, params_b=params_b, names=(la, lb))
        store.add(_row(m, run=ROUND_ROBIN, seed=None, point=None))
