"""GMO trained on an AlphaZero run's replay (`data.replay_run`): the buffer holds exactly the
run's positions with a move played, oldest first; a run on them only trains, through the
command line, and resumes as if uninterrupted without the source; clear errors for a path
that is not an AlphaZero run, another game, an empty replay, and a checkpoint written
before samples recorded their move (which cannot be resumed either, but still plays)."""

from __future__ import annotations

import json
import math
import re
import shutil

import jax
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp
import pytest
from flax import struct

from gomoku_jax import cli, players, train
from gomoku_jax.players import run_dir as rd
from gomoku_jax.train import checkpoint, override, replay
from gomoku_jax.train.alphazero.config import AlphaZeroConfig
from gomoku_jax.train.alphazero.replay_reader import load_replay
from gomoku_jax.train.alphazero.trainer import AlphaZero
from gomoku_jax.train.driver import TIMING_KEYS
from gomoku_jax.train.gmo.trainer import GMOTrainer
from gomoku_jax.train.mesh import make_mesh

# The test's own independent reads of checkpoints give orbax no shardings: it says so.
pytestmark = pytest.mark.filterwarnings("ignore:Sharding info not provided")

# The gmo_test preset (7×7 four in a row, as the session's `trained_run`), arena vs random.
SETS = ["eval.opponents=random"]


def config_for(source, *more):
    return override(train.preset("gmo_test", "gmo"),
                    [*SETS, f"data.replay_run={source}", *more])


def read_buffer(run_dir, step: int) -> dict:
    """The replay buffer of a checkpoint as NumPy, read by orbax alone (no target)."""
    state = ocp.PyTreeCheckpointer().restore(
        run_dir / rd.CHECKPOINT_DIR / str(step) / "state")
    return jax.tree.map(np.asarray, state["buffer"])


def positions_with_a_move(buffer: dict) -> dict:
    """The reference: the filled slots oldest first, those with a move and a known value."""
    data, size, position = buffer["data"], int(buffer["size"]), int(buffer["position"])
    capacity = data["value"].shape[0]
    slots = [(position - size + i) % capacity for i in range(size)]
    keep = [s for s in slots if data["action"][s] >= 0 and data["value_weight"][s] > 0
            and data["weight"][s] > 0]
    return {"board": data["state"]["board"][keep], "action": data["action"][keep],
            "value": data["value"][keep], "move_count": data["state"]["move_count"][keep]}


def gmo_contents(state) -> dict:
    buffer = jax.device_get(state.buffer)
    n = int(buffer.size)
    assert int(buffer.position) == n % buffer.capacity  # written once, from an empty buffer
    np.testing.assert_array_equal(buffer.data.weight[:n], 1.0)
    return {"board": buffer.data.state.board[:n], "action": buffer.data.action[:n],
            "value": buffer.data.value[:n], "move_count": buffer.data.state.move_count[:n]}


def assert_same(got: dict, want: dict) -> None:
    assert len(want["action"]) > 0
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)


@pytest.fixture(scope="module")
def source(trained_run, tmp_path_factory):
    """A copy of the session's AlphaZero run (the resume test moves it away for a while)."""
    copy = tmp_path_factory.mktemp("replay_source") / "alphazero"
    shutil.copytree(trained_run, copy)
    return copy


@pytest.fixture(scope="module")
def restored(trained_run):
    """(TrainState, previous, its iteration, trainer) of the run's latest checkpoint."""
    config = train.load_config(trained_run, AlphaZeroConfig)
    trainer = AlphaZero(config, mesh=make_mesh(1))
    state, previous, previous_iteration = checkpoint.restore(
        rd.manager(trained_run, read_only=True), trainer)
    return state, previous, previous_iteration, trainer


def with_step_6(trained_run, restored, dest, state):
    """A copy of the run with a checkpoint 6 (now the latest) holding `state`."""
    shutil.copytree(trained_run, dest)
    _, previous, previous_iteration, trainer = restored
    checkpoint.save(rd.manager(dest), 6, trainer, state, previous, previous_iteration)
    return dest


# ------------------------------------------------------------------ the buffer

def test_the_buffer_holds_the_runs_positions_with_a_move(source):
    state = GMOTrainer(config_for(source)).init()
    want = positions_with_a_move(read_buffer(source, 5))
    assert_same(gmo_contents(state), want)
    assert set(np.unique(want["value"])) <= {-1.0, 0.0, 1.0}
    # a step directory names the checkpoint (3: before the run's second wave of games)
    older = GMOTrainer(config_for(source / "checkpoints" / "3")).init()
    assert_same(gmo_contents(older), positions_with_a_move(read_buffer(source, 3)))
    assert len(gmo_contents(older)["action"]) < len(want["action"])


def test_only_samples_with_a_move_and_a_value_are_taken_oldest_first(
        trained_run, restored, tmp_path):
    """A checkpoint whose buffer has wrapped around and holds samples without a move, with
    an unknown value and padding: the filter and the order, against the NumPy reference."""
    state = restored[0]
    buffer = jax.device_get(state.buffer)
    size, capacity = int(buffer.size), buffer.capacity
    shift = capacity - size // 2  # the oldest sample at `shift`: the newest wrap to 0..
    data = jax.tree.map(lambda x: np.roll(np.asarray(x), shift, axis=0), buffer.data)
    rng = np.random.default_rng(0)
    slots = (shift + np.arange(size)) % capacity
    data = data.replace(
        action=np.where(np.isin(np.arange(capacity), rng.choice(slots, 5, replace=False)), -1,
                        data.action).astype(np.int32),
        value_weight=np.where(np.isin(np.arange(capacity), rng.choice(slots, 5)), 0.0,
                              data.value_weight).astype(np.float32),
        weight=np.where(np.arange(capacity) == slots[3], 0.0, data.weight).astype(np.float32))
    edited = replay.Replay(jax.tree.map(jnp.asarray, data), jnp.int32(size),
                           jnp.int32((shift + size) % capacity), jnp.int32(size))
    run = with_step_6(trained_run, restored, tmp_path / "edited", state.replace(buffer=edited))
    want = positions_with_a_move(read_buffer(run, 6))
    assert 0 < len(want["action"]) <= size - 5
    assert_same(gmo_contents(GMOTrainer(config_for(run)).init()), want)


# ------------------------------------------------------------------ runs

def metrics(run) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def runs(source, tmp_path_factory):
    """The run through the command line (2 iterations), and the same run stopped after 1
    and resumed with the source run moved away (a resume does not read it again)."""
    base = tmp_path_factory.mktemp("gmo_replay")
    full, resumed = base / "full", base / "resumed"
    assert cli.main(["train", "--algo", "gmo", "--preset", "gmo_test", "--run-dir", str(full),
                     "--no-progress", *[f"--set={s}" for s in SETS],
                     "--set", f"data.replay_run={source}"]) == 0
    train.train(config_for(source), resumed, progress=False, stop_after=1)
    away = source.with_name("moved_away")
    source.rename(away)
    try:
        assert cli.main(["train", "--run-dir", str(resumed), "--resume", "--no-progress"]) == 0
    finally:
        away.rename(source)
    return full, resumed


@pytest.mark.slow
def test_a_run_on_the_replay_only_trains(runs, source):
    full, _ = runs
    config = config_for(source)
    assert json.loads((full / "config.json").read_text())["data"]["replay_run"] == str(source)
    records = metrics(full)
    count = len(positions_with_a_move(read_buffer(source, 5))["action"])
    assert [r["iteration"] for r in records] == [1, 2]
    for i, r in enumerate(records, 1):
        assert r["from_replay_run"] == 1 and r["trained"] == 1
        assert r["games"] == r["positions"] == r["plies"] == r["mean_game_length"] == 0
        assert r["buffer_size"] == count  # nothing added
        assert r["sgd_steps"] == i * config.optim.sgd_steps
        assert math.isfinite(r["loss"]) and r["grad_norm"] > 0
    assert json.loads((full / "summary.json").read_text())["finished"]
    assert players.load(full).step == 2


def test_resume_equals_the_uninterrupted_run(runs):
    full, resumed = runs
    a, b = players.load(full), players.load(resumed)
    assert a.step == b.step == 2
    for x, y in zip(jax.tree.leaves(a.variables), jax.tree.leaves(b.variables)):
        np.testing.assert_array_equal(x, y)

    strip = lambda r: {k: v for k, v in r.items() if k not in TIMING_KEYS}  # noqa: E731
    assert [strip(r) for r in metrics(full)] == [strip(r) for r in metrics(resumed)]


# ------------------------------------------------------------------ errors

@struct.dataclass
class SampleBefore:
    """`Sample` as checkpoints were written before it recorded the move played."""

    state: object
    policy: jax.Array
    value: jax.Array
    weight: jax.Array
    value_weight: jax.Array


@struct.dataclass
class PendingBefore:
    state: object
    policy: jax.Array
    mover: jax.Array
    length: jax.Array


def test_a_checkpoint_without_moves_cannot_be_resumed_nor_its_replay_read(
        trained_run, restored, tmp_path):
    state = restored[0]
    d, p = state.buffer.data, state.pending
    old = state.replace(
        buffer=state.buffer.replace(data=SampleBefore(d.state, d.policy, d.value, d.weight,
                                                      d.value_weight)),
        pending=PendingBefore(p.state, p.policy, p.mover, p.length))
    run = with_step_6(trained_run, restored, tmp_path / "old", old)
    cause = "written before replay samples recorded the move played"
    with pytest.raises(ValueError, match=re.escape(f"data.replay_run {run}: checkpoint 6 ")
                       + f".*{cause}.* has no 'buffer/data/action'"):
        GMOTrainer(config_for(run)).init()
    with pytest.raises(ValueError, match=f"checkpoint 6 .*{cause}.*cannot be resumed"):
        train.train(override(train.load_config(run, AlphaZeroConfig), ["run.iterations=7"]),
                    run, progress=False)
    with pytest.raises(ValueError, match=f"checkpoint 6 .*{cause}.* has no 'buffer/data/action'"):
        load_replay(run)
    assert players.load(run).step == 6  # its network still plays


def test_errors_of_the_source(trained_run, restored, source, runs, tmp_path):
    state = restored[0]
    empty = with_step_6(trained_run, restored, tmp_path / "empty",
                        state.replace(buffer=state.buffer.replace(size=jnp.int32(0))))
    no_moves = with_step_6(trained_run, restored, tmp_path / "no_moves", state.replace(
        buffer=state.buffer.replace(data=state.buffer.data.replace(
            action=jnp.full_like(state.buffer.data.action, -1)))))
    full, _ = runs
    for run, sets, message in [
        (tmp_path / "nowhere", [], "checkpoint path .*nowhere does not exist"),
        (tmp_path, [], ".* is not a run directory"),
        (full, [], re.escape(f"{full} holds a run of --algo gmo, not an AlphaZero run")),
        (source, ["game.board_size=9"], "the run's game is not this config's "
                                        r"\(game.board_size: the run's 7, this config's 9\)"),
        (source, ["game.win_length=5"], r".*\(game.win_length: the run's 4, this config's 5\)"),
        (empty, [], r"the replay buffer of checkpoint 6 .* holds no position with a move "
                    r"played and a known outcome \(0 samples\)"),
        (no_moves, [], r"the replay buffer of checkpoint 6 .* holds no position with a"),
        (source, ["replay.min_size=100000"], "checkpoint 5 .* positions, fewer than "
                                             "replay.min_size=100000: no iteration would"),
    ]:
        with pytest.raises(ValueError, match=re.escape(f"data.replay_run {run}: ") + message):
            GMOTrainer(config_for(run, *sets)).init()
    # through the command line: the message, and nothing written
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "--algo", "gmo", "--preset", "gmo_test", "--run-dir",
                  str(tmp_path / "gmo"), "--set", f"data.replay_run={tmp_path / 'nowhere'}",
                  "--no-progress"])
    assert str(e.value.code).startswith("error: data.replay_run ")
    assert not (tmp_path / "gmo").exists()
