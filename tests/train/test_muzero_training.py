"""MuZero's training: the unroll windows against a reference written from their definition
and against the real game replayed, the loss's gradient scaling, its trainer's iteration,
and its run on 2 processes against one device (its lifecycle on the run driver is
tests/train/test_algorithms.py's)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sharded_runs
from launching import Launch, metrics

from gomoku_jax import players, train
from gomoku_jax.games.protocol import is_over, reward_of
from gomoku_jax.train import preset, trainer_for
from gomoku_jax.train.alphazero.selfplay import Trajectories
from gomoku_jax.train.muzero import learner, samples

K, A = 3, 5


def random_columns(rng, slots, window, boards):
    """Trajectories [L + T, B] of made-up games, and each board's games as lists of
    positions (dicts): a board's pending slots hold the first positions of its first game,
    its window the rest of that game and the games after it."""
    m = slots + window
    fields = {f: np.zeros((m, boards), np.float32) for f in ("done", "result", "value")}
    ints = {f: np.zeros((m, boards), np.int32) for f in ("id", "action", "mover")}
    policy = np.zeros((m, boards, A), np.float32)
    present, written = np.zeros((m, boards), bool), np.zeros((m, boards), bool)
    columns = []
    for b in range(boards):
        sequence, games = [], []
        while len(sequence) < slots + window:
            length, result = int(rng.integers(1, 7)), float(rng.choice([-1.0, 0.0, 1.0]))
            game = [{"id": 1000 * b + len(sequence) + i, "action": int(rng.integers(A)),
                     "mover": i % 2, "policy": rng.dirichlet(np.ones(A)).astype(np.float32),
                     "done": i == length - 1, "result": result if i == length - 1 else 0.0,
                     "value": result if (length - 1 - i) % 2 == 0 else -result}
                    for i in range(length)]
            games.append(game)
            sequence += game
        first = len(games[0])
        pending = int(rng.integers(0, min(first, slots) + 1))
        times = list(range(pending)) + list(range(slots, m))  # pending slots, then the window
        ends = np.cumsum([len(g) for g in games])
        finished = ends[ends <= pending + window]
        last = finished[-1] if len(finished) else 0
        for i, t in enumerate(times):
            p = sequence[i]
            for f in ("done", "result", "value"):
                fields[f][t, b] = p[f]
            for f in ("id", "action", "mover"):
                ints[f][t, b] = p[f]
            policy[t, b] = p["policy"]
            present[t, b], written[t, b] = True, i < last
        columns.append([g for g, end in zip(games, ends) if end <= last])
    traj = Trajectories(state={"id": jnp.asarray(ints["id"])}, policy=jnp.asarray(policy),
                        mover=jnp.asarray(ints["mover"]), action=jnp.asarray(ints["action"]),
                        done=jnp.asarray(fields["done"] > 0),
                        result=jnp.asarray(fields["result"]),
                        value=jnp.asarray(fields["value"]), present=jnp.asarray(present),
                        written=jnp.asarray(written))
    return traj, columns


def reference_window(game, i):
    """The unroll window of position i of `game` (a list of positions), from the
    definition: in the game up to its end, absorbing after."""
    w = {"action": [], "policy": [], "value": [], "reward": [], "in_game": []}
    for k in range(K + 1):
        inside = i + k < len(game)
        p = game[i + k] if inside else None
        w["in_game"].append(float(inside))
        w["policy"].append(p["policy"] if inside else np.zeros(A, np.float32))
        w["value"].append(p["value"] if inside else 0.0)
        if k < K:
            w["action"].append(p["action"] if inside else None)
            w["reward"].append(p["result"] if inside else 0.0)
    return w


@pytest.mark.parametrize("seed", range(4))
def test_windows_match_their_definition(seed):
    """Every written position's window (its moves, policies, values, rewards and where the
    game ends) is the reference's; exactly the positions of ended games are valid; moves
    past the end are actions of the game."""
    rng = np.random.default_rng(seed)
    slots, window, boards = 6, 9, 5
    traj, columns = random_columns(rng, slots, window, boards)
    out, valid = jax.device_get(samples.windows(traj, K, A, jax.random.key(seed)))
    by_id = {int(i): n for n, i in enumerate(out.state["id"]) if valid[n]}
    expected = {p["id"]: (game, i) for games in columns for game in games
                for i, p in enumerate(game)}
    assert set(by_id) == set(expected)
    for pid, (game, i) in expected.items():
        n, w = by_id[pid], reference_window(game, i)
        np.testing.assert_array_equal(out.in_game[n], w["in_game"])
        np.testing.assert_allclose(out.policy[n], np.stack(w["policy"]))
        np.testing.assert_array_equal(out.value[n], w["value"])
        np.testing.assert_array_equal(out.reward[n], w["reward"])
        for k, a in enumerate(w["action"]):
            assert out.action[n, k] == a if a is not None else 0 <= out.action[n, k] < A
    assert np.all(out.weight == 1)


@pytest.fixture(scope="module")
def trained():
    """The test preset's trainer after two iterations (its games end, it trains), the
    first bootstrapped: its games searched on the real game with the heuristic evaluator,
    the second's on the learned model."""
    trainer = trainer_for(train.override(preset("muzero_test"),
                                         ["selfplay.bootstrap_iterations=1"]))
    state = trainer.init()
    records = []
    for done in range(2):
        state, m = trainer.iteration(state, done)
        records.append({**jax.device_get(m), **trainer.record(done)})
    return trainer, state, records


def test_the_buffer_replays_on_the_real_game(trained):
    """Each window in the replay buffer, replayed from its position with the real game:
    its moves are legal while the game runs, its rewards are the game's, the game ends
    where the window says, and the values alternate in sign up to the result of the
    game's last move."""
    trainer, state, records = trained
    env, buffer = trainer.env, jax.device_get(state.buffer)
    assert all(r["trained"] == 1 for r in records) and int(buffer.size) > 0
    assert [r["selfplay_evaluator"] for r in records] == ["heuristic", "network"]
    data = jax.tree.map(lambda x: x[:int(buffer.size)], buffer.data)

    def replay(window):
        s = window.state
        rewards, over = [], []
        for k in range(K):
            mover = s.current_player
            s = env.step(s, window.action[k])
            rewards.append(reward_of(s, mover))
            over.append(is_over(s))
        return jnp.stack(rewards), jnp.stack(over)

    rewards, over = jax.device_get(jax.vmap(replay)(jax.tree.map(jnp.asarray, data)))
    legal = jax.device_get(jax.vmap(lambda s, a: s.legal_action_mask[a])(
        jax.tree.map(jnp.asarray, data.state), jnp.asarray(data.action[:, 0])))
    assert legal.all()
    in_game = data.in_game
    ended = np.cumsum(over, axis=1) > 0  # the game is over after move k
    np.testing.assert_array_equal(in_game[:, 1:], ~ended & (in_game[:, :K] > 0))
    np.testing.assert_array_equal(data.reward, np.where(in_game[:, :K] > 0, rewards, 0))
    both = (in_game[:, 1:] > 0)
    np.testing.assert_array_equal(np.where(both, data.value[:, 1:], 0),
                                  np.where(both, -data.value[:, :K], 0))
    last = (in_game[:, :K] > 0) & ended & ~np.concatenate(
        [np.zeros((len(ended), 1), bool), ended[:, :-1]], axis=1)
    np.testing.assert_array_equal(data.value[:, :K][last], data.reward[last])
    np.testing.assert_allclose(data.policy.sum(-1), in_game, atol=1e-5)


def test_the_loss_unrolls_and_the_gradient_scale_holds(trained):
    trainer, state, records = trained
    assert set(records[0]) >= {"loss", "policy_loss", "value_loss", "reward_loss"}
    for r in records:
        parts = r["policy_loss"] + r["value_loss"] + r["reward_loss"]
        assert np.isfinite(r["loss"]) and abs(r["loss"] - parts) < 1e-4 * max(1, parts)
    g = jax.grad(lambda x: jnp.sum(learner.scale_gradient(x, 0.5) ** 2))(jnp.arange(3.0))
    np.testing.assert_allclose(g, 0.5 * 2 * jnp.arange(3.0))
    assert learner.scale_gradient(jnp.float32(3.0), 0.5) == 3.0


@pytest.mark.slow
def test_two_processes_match_one_device(tmp_path):
    """The test preset on 2 processes of one device each (jax.distributed over gloo; the
    games and each batch of windows sharded over the 2 devices, GSPMD) against the same run
    on this process's one device: the same metrics and params up to float reduction order
    (tests/sharded_runs.py). At its smallest: each process compiles without the persistent
    cache, and every device and iteration more adds gloo collectives (2 processes of 4
    devices for 2 iterations take about twice as long); one iteration trains. No arena: it
    changes no training state."""
    sets = ["eval.opponents=", "run.iterations=1"]
    config = train.override(preset("muzero_test"), sets)
    run, one = tmp_path / "run", tmp_path / "one"
    launch = Launch("--processes", "2", "--cpu-devices", "1", "--", "train", "--run-dir",
                    str(run), "--algo", "muzero", "--preset", "muzero_test",
                    *[x for s in sets for x in ("--set", s)], "--no-progress")
    try:
        train.train(config, one, progress=False)  # while the processes compile
        assert launch.wait(600) == 0, launch.output
    finally:
        launch.stop()
    assert "[p0] 2 processes (environment), 2 devices" in launch.output, launch.output
    two = metrics(run)
    assert [m["trained"] for m in two] == [1.0]
    sharded_runs.assert_metrics_match(two, metrics(one))
    sharded_runs.assert_leaves_match(
        sharded_runs.leaves(players.load(run).variables),
        sharded_runs.leaves(players.load(one).variables), config.optim.learning_rate,
        config.optim.sgd_steps)
