"""GMO training (`train/gmo/`, `gomoku-jax train --algo gmo`, run by the one driver
`train.train`): the data's labels, the augmentation of (state, move) pairs
(`train.augment`), the loss falling on a fixed batch, a run through the command line,
resume, loading a run to play (`players.load`: a `GMOPlayer`), and clear errors."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gomoku_jax import cli, games, players, train
from gomoku_jax.agents.gmo import GMOAgent
from gomoku_jax.agents.specs import make_agent
from gomoku_jax.games.protocol import is_over
from gomoku_jax.players import run_dir as rd
from gomoku_jax.train import RunSection, augment, override
from gomoku_jax.train.driver import TIMING_KEYS
from gomoku_jax.train.gmo import data as gmo_data
from gomoku_jax.train.gmo.config import DataSection, GMOTrainConfig
from gomoku_jax.train.gmo.trainer import GMOTrainer, losses

TEST = train.preset("gmo_test", "gmo")  # 7×7 four in a row, a tiny GMO, random players


def tree_equal(a, b) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b))) \
        and jax.tree.structure(a) == jax.tree.structure(b)


# ------------------------------------------------------------------ data and augmentation

@pytest.fixture(scope="module")
def random_games():
    """Six games of random players on the test preset's board (`play_games`' output)."""
    env = TEST.env()
    agent = make_agent("random").bind(env)
    return jax.jit(lambda k: gmo_data.play_games(env, agent, None, k, 6, random_plies=1,
                                                 epsilon=0.5))(jax.random.key(3))


def real_samples(random_games, n: int) -> gmo_data.GMOSample:
    samples, valid, _ = random_games
    return jax.tree.map(lambda x: x[np.flatnonzero(np.asarray(valid))[:n]], samples)


def test_every_ply_is_labelled_with_its_games_outcome_for_the_mover(random_games):
    env = TEST.env()
    step = jax.jit(env.step)
    samples, valid, stats = jax.device_get(random_games)  # NumPy: no op-by-op programs
    length = env.max_game_length
    valid = np.asarray(valid).reshape(length, 6)
    value = np.asarray(samples.value).reshape(length, 6)
    action = np.asarray(samples.action).reshape(length, 6)
    movers = np.asarray(samples.state.current_player).reshape(length, 6)
    assert int(stats.positions) == valid.sum() and int(stats.games) == 6
    for b in range(6):
        n = int(valid[:, b].sum())
        assert valid[:n, b].all() and not valid[n:, b].any()  # the game's plies, in order
        # replay the game: the recorded moves are legal and end it at ply n
        state = jax.tree.map(lambda x: x.reshape((length, 6) + x.shape[1:])[0, b],
                             samples.state)
        for t in range(n):
            assert bool(state.legal_action_mask[action[t, b]]) and not bool(is_over(state))
            state = step(state, jnp.int32(action[t, b]))
        assert bool(is_over(state))
        result = np.asarray(state.rewards)  # the last move's rewards, by player id
        np.testing.assert_array_equal(value[:n, b], result[movers[:n, b]])
        assert (value[n:, b] == 0).all()


@pytest.mark.parametrize("game, kw, move", [
    ("gomoku", {"board_size": 7, "win_length": 4, "observation": "canonical"}, (1, 2)),
    ("fauxgo", {"board_size": 5}, (0, 3)),
])
def test_augmentation_keeps_state_and_move_aligned_under_all_8_symmetries(game, kw, move):
    env = games.make(game, **kw)
    n = env.board_size
    state = env.from_moves([n * 3 + 3, n * 0 + 1, n * 4 + 2])
    r, c = move
    action = jnp.int32(r * n + c)
    assert bool(state.legal_action_mask[action])
    sample = gmo_data.GMOSample(state, action, jnp.float32(1), jnp.float32(1))

    def images(g):
        image = augment.transform_sample(env, sample, g)
        # the move played in the image is the image of the move played
        played_then_moved = env.observe(env.transform_state(env.step(state, action), g))
        moved_then_played = env.observe(env.step(image.state, image.action))
        obs, moves = gmo_data.batch_inputs(env, jax.tree.map(lambda x: x[None], image))
        return (image.action, played_then_moved, moved_then_played,
                image.state.legal_action_mask[image.action], moves.target[0], obs[0],
                env.observe(env.transform_state(state, g)))

    a, after1, after2, legal, target, obs, obs_ref = jax.jit(jax.vmap(images))(
        jnp.arange(8))
    np.testing.assert_array_equal(after1, after2)
    np.testing.assert_array_equal(obs, obs_ref)
    assert np.asarray(legal).all()
    np.testing.assert_array_equal(target, a)
    # the cell the move lands on under g, from NumPy (rot90 g % 4 times, then mirror)
    for g in range(8):
        board = np.zeros((n, n))
        board[r, c] = 1
        board = np.rot90(board, g % 4)
        board = np.fliplr(board) if g >= 4 else board
        assert int(a[g]) == int(np.argmax(board)), g
    assert len(set(np.asarray(a).tolist())) == 8  # an off-axis cell has 8 distinct images
    if env.pass_action is not None:  # the pass is a fixed point
        pass_sample = sample.replace(action=jnp.int32(env.pass_action))
        for g in range(8):
            moved = augment.transform_sample(env, pass_sample, jnp.int32(g))
            assert int(moved.action) == env.pass_action


def test_augment_draws_one_symmetry_per_sample_for_state_and_move_together(random_games):
    env = TEST.env()
    batch = real_samples(random_games, 32)
    augmented = jax.jit(lambda b, k: augment.augment(env, b, k))(batch, jax.random.key(2))
    images = jax.jit(jax.vmap(lambda g: jax.vmap(
        lambda s: augment.transform_sample(env, s, g))(batch)))(jnp.arange(8))
    same = lambda g, i: all(np.array_equal(np.asarray(x)[g, i], np.asarray(y)[i])  # noqa: E731
                            for x, y in zip(jax.tree.leaves(images),
                                            jax.tree.leaves(augmented)))
    matches = np.array([[same(g, i) for i in range(32)] for g in range(8)])
    assert matches.any(axis=0).all()  # every sample is one image of its original, whole
    assert not matches[0].all()  # and not all of them the identity


# ------------------------------------------------------------------ the loss

@pytest.mark.slow
def test_loss_falls_on_a_fixed_batch_and_trains_both_encoders(random_games):
    config = override(TEST, ["optim.learning_rate=3e-3", "optim.grad_clip=0"])
    trainer = GMOTrainer(config)
    env = trainer.env
    batch = real_samples(random_games, 48)
    params = jax.jit(trainer.model.init)(jax.random.key(1))  # one program, not op by op
    optim = config.optim

    @jax.jit
    def fit(params):
        def step(carry, key):
            p, o = carry
            p, o, parts, _ = trainer.sgd_step(p, o, batch, key)  # dropout on
            return (p, o), parts.loss

        (p, _), curve = jax.lax.scan(step, (params, trainer.optimizer.init(params)),
                                     jax.random.split(jax.random.key(2), 300))
        return p, curve

    @jax.jit  # one program, not op by op
    def evaluate(p):  # dropout off
        obs, moves = gmo_data.batch_inputs(env, batch)
        return losses(trainer.model, p, obs, moves, batch.value, batch.weight, None,
                      (optim.log_var_min, optim.log_var_max))

    new, curve = fit(params)
    before, after = evaluate(params), evaluate(new)
    assert float(after.loss) < float(before.loss) - 0.5, (before, after)
    assert float(after.mse) < 0.25 * float(before.mse), (before, after)
    assert float(np.mean(curve[-20:])) < float(np.mean(curve[:20]))
    for part in ("state_encoder", "move_encoder", "value_net"):
        assert not tree_equal(params[part], new[part]), part


# ------------------------------------------------------------------ runs

@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    """The gmo_test preset run to its end (2 iterations) through the command line."""
    run = tmp_path_factory.mktemp("gmo") / "full"
    assert cli.main(["train", "--algo", "gmo", "--preset", "gmo_test", "--run-dir", str(run),
                     "--no-progress"]) == 0
    return run


def metrics(run) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_a_cli_run_writes_config_metrics_checkpoints_and_summary(full_run, capsys):
    data = json.loads((full_run / "config.json").read_text())
    assert data["algo"] == "gmo" and rd.run_algo(full_run) == "gmo"
    assert data["player"] == "gmo" and rd.tags(data) == ("gmo", "gmo")
    assert train.load_config(full_run) == TEST == train.load_config(full_run, GMOTrainConfig)
    records = metrics(full_run)
    assert [r["iteration"] for r in records] == [1, 2]
    assert {"loss", "value_mse", "log_var", "games", "positions", "buffer_size",
            "seconds"} <= set(records[0])
    assert records[1]["buffer_size"] == records[0]["positions"] + records[1]["positions"]
    assert records[1]["sgd_steps"] == 2 * TEST.optim.sgd_steps
    assert rd.manager(full_run, read_only=True).all_steps() == [1, 2]
    summary = json.loads((full_run / "summary.json").read_text())
    assert summary["finished"] and summary["iterations"] == 2 and summary["algo"] == "gmo"
    assert set(summary["arena"]) == {"random", "previous"} == set(records[1]["arena"])
    assert all(r["wins"] + r["draws"] + r["losses"] == 16 for r in summary["arena"].values())
    assert (full_run / "tensorboard").is_dir()
    # a finished run is left alone
    assert cli.main(["train", "--run-dir", str(full_run), "--resume", "--no-progress"]) == 0
    assert "already finished" in capsys.readouterr().out


def test_resume_equals_the_uninterrupted_run(full_run, tmp_path):
    run = tmp_path / "resumed"
    # stop_after=0 runs no iteration (and writes no checkpoint: the run starts afresh below)
    nothing = train.train(TEST, run, progress=False, stop_after=0)
    assert nothing["iterations"] == 0 and not nothing["finished"]
    assert not rd.has_checkpoints(run) and metrics(run) == []
    train.train(TEST, run, progress=False, stop_after=1)
    assert [r["iteration"] for r in metrics(run)] == [1]
    # --resume finds the algorithm in the run directory
    assert cli.main(["train", "--run-dir", str(run), "--resume", "--no-progress"]) == 0
    a, b = players.load(full_run), players.load(run)
    assert a.step == b.step == 2
    assert tree_equal(a.variables, b.variables)

    strip = lambda r: {k: v for k, v in r.items() if k not in TIMING_KEYS}  # noqa: E731
    assert [strip(r) for r in metrics(full_run)] == [strip(r) for r in metrics(run)]


def test_a_trained_gmo_plays_through_checkpoint_specs(full_run, tmp_path):
    network = players.load(full_run)
    assert isinstance(network, players.GMOPlayer) and network.step == 2
    assert network.algo == "gmo" and network.gmo == TEST.gmo and network.game == TEST.game
    assert network.run_dir == full_run.absolute()
    assert network.to_dict() == {"run_dir": str(full_run.absolute()), "step": 2, "algo": "gmo"}
    assert isinstance(network.agent(), GMOAgent) and network.plays(network.agent())
    assert "step 2 (gmo, " in network.describe()
    last = players.load(full_run / "checkpoints" / "1")
    assert last.step == 1 and not tree_equal(last.variables, network.variables)
    for spec in ("gmo", "trained"):
        agent = make_agent(spec, network)
        assert isinstance(agent, GMOAgent) and agent.bind(network.env).model.config == TEST.gmo
        assert network.params_for(agent) is network.variables
    tuned = make_agent("gmo:beta=0,optim_steps=0", network)
    assert (tuned.beta, tuned.optim_steps, tuned.hidden_dim) == (0, 0, TEST.gmo.hidden_dim)
    assert network.params_for(make_agent("random", network)) is None
    for spec, message in [("gmo:hidden_dim=64", "hidden_dim is the checkpoint's network size"),
                          ("policy:evaluator=network", "the checkpoint is a GMO run"),
                          ("trained:num_simulations=8", "takes no num_simulations")]:
        with pytest.raises(ValueError, match=message):
            make_agent(spec, network)
    out = tmp_path / "arena.json"
    assert cli.main(["arena", "--checkpoint", str(full_run), "--a", "gmo", "--b", "random",
                     "--games", "16", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["checkpoint"]["algo"] == "gmo" and result["checkpoint"]["step"] == 2


# ------------------------------------------------------------------ errors

@pytest.mark.parametrize("assignment, message", [
    ("bogus.key=1", "unknown config key 'bogus.key'; valid keys: game.id"),
    ("data.bogus=1", "unknown field 'bogus' for config.data"),
    ("data.games=0", "data.games must be an int >= 1, got 0"),
    ("data.games=True", "config.data field 'games' takes an int, got 'True'"),
    ("data.games=many", "config.data field 'games' takes an int, got 'many'"),
    ("data.epsilon=1.5", r"data.epsilon must be in \[0, 1\], got 1.5"),
    ("data.random_plies=-1", "data.random_plies must be an int >= 0, got -1"),
    ("data.agent=nobody", "data.agent: unknown agent 'nobody'; available"),
    ("data.agent=mcts:num_simulations=0",
     "data.agent: SearchAgent.num_simulations must be an int >= 1, got 0"),
    ("optim.schedule=linear", "optim.schedule must be one of"),
    ("optim.log_var_min=5", "optim.log_var_min must be < optim.log_var_max"),
    ("optim.batch_size=0", "optim.batch_size must be an int >= 1, got 0"),
    ("optim.learning_rate=-1", "optim.learning_rate must be >= 0, got -1.0"),
    ("gmo.hidden_dim=0", "gmo.hidden_dim must be an int >= 1, got 0"),
    ("gmo.dropout_rate=1", r"dropout_rate must be in \[0, 1\)"),
    ("eval.games=0", "eval.games must be an int >= 1, got 0"),
    ("run.iterations=0", "run.iterations must be an int >= 1, got 0"),
    ("run.devices=-1", "run.devices must be an int >= 0, got -1"),
    ("game.board_size=3", "game.board_size must be an int in 5..20, got 3"),
])
def test_bad_config_values_raise_clear_errors(assignment, message):
    with pytest.raises(ValueError, match=message):
        override(TEST, [assignment])


@pytest.mark.parametrize("section, kw, message", [
    (DataSection, {"games": 0}, "data.games must be an int >= 1, got 0"),
    (DataSection, {"games": True}, "data.games takes an int, got True"),
    (DataSection, {"epsilon": 1.5}, r"data.epsilon must be in \[0, 1\], got 1.5"),
    (RunSection, {"devices": -1}, "run.devices must be an int >= 0, got -1"),
])
def test_sections_built_directly_validate_their_fields(section, kw, message):
    with pytest.raises(ValueError, match=message):
        section(**kw)


def test_configs_round_trip_and_list_their_keys(capsys):
    PRESETS = train.presets_of("gmo")
    assert train.algorithm("gmo") is GMOTrainer and set(PRESETS) == {
        "gmo_quick", "gmo_fauxgo", "gmo_gpu", "gmo_test"}
    assert GMOTrainer.Config is GMOTrainConfig and GMOTrainer.test_preset == "gmo_test"
    assert GMOTrainer.default_preset in PRESETS
    for name, config in PRESETS.items():
        assert isinstance(config, GMOTrainConfig), name
        assert GMOTrainConfig.from_dict(json.loads(config.to_json())) == config, name
        assert train.preset(name) == config == train.preset(name, "gmo"), name
        assert train.presets()[name] == "gmo", name
        GMOTrainer(config)  # every preset's data agent plays its game
    assert train.preset("gmo_fauxgo").env().id == "fauxgo"
    with pytest.raises(ValueError, match="unknown preset 'quick' of training algorithm 'gmo'"):
        train.preset("quick", "gmo")
    assert json.loads(TEST.to_json())["player"] == "gmo"
    # one trainer per config; a restore target replicated over the run's devices
    trainer = train.trainer_for(TEST)
    assert trainer is train.trainer_for(TEST)
    assert all(x.sharding == trainer.placement.replicated
               for x in jax.tree.leaves(trainer.abstract_state()))
    with pytest.raises(ValueError, match=r"run.devices=3 but only \d+ device"):
        GMOTrainer(override(TEST, ["run.devices=3"]))
    selfplay = GMOTrainer(override(TEST, ["data.agent=self"]))  # the GMO being trained
    assert selfplay.self_play and selfplay.data_agent == selfplay.agent()
    with pytest.raises(ValueError, match="a 'alphazero' run's, not a 'gmo' run's"):
        GMOTrainConfig.from_dict({"algo": "alphazero"})
    with pytest.raises(ValueError, match="data.agent 'fauxgo_heuristic': agent "
                                         "'fauxgo_heuristic' plays"):
        GMOTrainer(override(TEST, ["data.agent=fauxgo_heuristic"]))
    assert cli.main(["train", "--algo", "gmo", "--preset", "gmo_test", "--list-keys",
                     "--set", "data.games=16"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split(" = ")[0] for line in lines] == train.valid_keys(TEST)
    values = dict(line.split(" = ", 1) for line in lines)
    assert values["data.games"] == "16" and values["gmo.hidden_dim"] == "32"
    assert json.loads(values["eval.opponents"]) == ["random", "previous"]


@pytest.mark.parametrize("argv, message", [
    (["--algo", "gmo", "--preset", "quick"], "--preset quick is not a preset of --algo gmo"),
    (["--preset", "gmo_test", "--set", "data.games=0"], "data.games must be an int >= 1, got 0"),
    (["--preset", "gmo_test", "--set", "selfplay.games=8"], "unknown config key"),
    (["--algo", "gmo", "--resume"], "is not a run directory: no config.json in it"),
    (["--preset", "gmo_test", "--set", "eval.opponents=random;nobody"],
     "unknown agent 'nobody'"),
])
def test_bad_gmo_flags_exit_with_clear_errors(argv, message, tmp_path):
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "--run-dir", str(tmp_path / "run"), "--no-progress"] + argv)
    assert message in str(e.value.code)
    assert not (tmp_path / "run" / "checkpoints").exists()


def alphazero_like_copy(full_run):
    """A copy of the run's config.json as an AlphaZero run's from before the tags (no algo
    and no player tag)."""
    other = full_run.parent / "alphazero_like"
    other.mkdir(exist_ok=True)
    data = json.loads((full_run / "config.json").read_text())
    del data["algo"], data["player"]
    (other / "config.json").write_text(json.dumps(data))
    return other


def test_a_gmo_run_directory_refuses_other_configs_and_algorithms(full_run):
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "--algo", "gmo", "--preset", "gmo_test", "--run-dir", str(full_run),
                  "--set", "run.seed=3", "--no-progress"])
    assert "holds a run with a different config (run.seed differ)" in str(e.value.code)
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "--algo", "alphazero", "--run-dir", str(full_run), "--resume"])
    assert f"--algo alphazero, but {full_run} holds a run of --algo gmo" in str(e.value.code)
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "--run-dir", str(full_run), "--resume", "--set", "gmo.beta=0"])
    assert "--set may change only" in str(e.value.code)
    with pytest.raises(SystemExit) as e:  # an AlphaZero preset in a GMO run's directory
        cli.main(["train", "--preset", "test", "--run-dir", str(full_run)])
    assert f"{full_run} holds a run of --algo gmo, not alphazero" in str(e.value.code)
    with pytest.raises(ValueError, match="holds a run of --algo alphazero, not gmo"):
        train.load_config(alphazero_like_copy(full_run), GMOTrainConfig)
    with pytest.raises(ValueError, match="no checkpoint 7"):
        players.load(full_run, 7)


def test_export_refuses_a_gmo_run_with_a_clear_error(full_run, tmp_path):
    from gomoku_jax.io.export import export_checkpoint

    with pytest.raises(ValueError, match="is a gmo run of a gmo network: export takes a "
                                         "policy-value network"):
        export_checkpoint(full_run, tmp_path / "net.hlo")
    assert not (tmp_path / "net.hlo").exists()


def test_pbrain_plays_a_gmo_run_as_gmo_or_trained(full_run):
    from gomoku_jax.cli.pbrain import network_agent

    run = players.load(full_run)
    for name, pairs in (("gmo", ["beta=0"]), ("trained", [])):
        agent = network_agent(name, pairs, run)
        assert isinstance(agent, GMOAgent)
        assert agent.state_dim == run.gmo.state_dim == TEST.gmo.state_dim
    assert network_agent("gmo", ["beta=0"], run).beta == 0.0
    with pytest.raises(ValueError, match="GMO run"):
        network_agent("mcts", [], run)
