"""The AlphaZero run (`gomoku_jax.train.alphazero`, `.driver`, `.checkpoint`): a killed and
resumed run reproduces the uninterrupted one exactly (its arena's "previous" network
included), a finished run is left alone or extended, checkpoints are saved by leaf name and
record their env, 8 devices compute what 1 does, one iteration runs on pgx's connect_four,
and bad inputs."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import jax
import numpy as np
import orbax.checkpoint as ocp
import pytest
import sharded_runs
from conftest import TRAINED_SETS, trained_config
from flax import struct

from gomoku_jax import players
from gomoku_jax.players import run_dir as rd
from gomoku_jax.train import checkpoint, driver, load_config
from gomoku_jax.train.alphazero.trainer import AlphaZero
from gomoku_jax.train.arena import arena_table
from gomoku_jax.train.config import override
from gomoku_jax.train.driver import TIMING_KEYS
from gomoku_jax.train.mesh import make_mesh

# The session's shared run (conftest): the test preset without synthetic examples, 5
# iterations, the arena every 2 (and at the end) against random and the previous network.
CFG = trained_config()


def metrics(run_dir: pathlib.Path) -> list[dict]:
    lines = (run_dir / rd.METRICS_FILE).read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k not in TIMING_KEYS} for line in lines]


def final_state(run_dir: pathlib.Path, config=CFG):
    """(TrainState, previous network, its iteration) of the run's latest checkpoint."""
    mgr = rd.manager(run_dir, read_only=True)
    return jax.device_get(checkpoint.restore(mgr, AlphaZero(config)))


def load_network(path, step=None):
    """(model, variables, config, step) of a run's network, as a player loads it."""
    player = players.load(path, step)
    return player.model, player.variables, load_config(player.run_dir), player.step


def assert_trees_equal(a, b):
    leaves_a, tree_a = jax.tree.flatten(a)
    leaves_b, tree_b = jax.tree.flatten(b)
    assert tree_a == tree_b
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree.flatten_with_path(a)[0]]
    differ = [p for p, x, y in zip(paths, leaves_a, leaves_b) if not np.array_equal(x, y)]
    assert not differ, f"leaves that differ: {differ}"


@pytest.fixture(scope="module")
def runs(tmp_path_factory, trained_run):
    """An uninterrupted 5-iteration run (the session's `trained_run`), and the same run
    stopped after iteration 4 and
    'killed' between iteration 4's metrics line and its checkpoint (and in the middle of
    writing another line), then resumed by a new `train` call. It restarts from checkpoint
    3, whose self-play games are mid-game and whose arena "previous" is the network of
    iteration 2 (the last evaluation), redoes iteration 4 (evaluated against that network)
    and finishes."""
    a, b = trained_run, tmp_path_factory.mktemp("alphazero") / "resumed"
    summary_a = json.loads((a / rd.SUMMARY_FILE).read_text())
    driver.train(CFG, b, progress=False, stop_after=4)
    assert rd.manager(b, read_only=True).latest_step() == 4
    assert not (b / rd.SUMMARY_FILE).exists()  # the run did not finish
    shutil.rmtree(b / rd.CHECKPOINT_DIR / "4")
    with (b / rd.METRICS_FILE).open("a") as f:
        f.write('{"iteration": 5, "loss": 0.1')
    assert rd.manager(b, read_only=True).latest_step() == 3
    summary_b = driver.train(CFG, b, progress=False)
    return a, b, summary_a, summary_b


def test_resumed_run_equals_uninterrupted_run(runs):
    a, b, summary_a, summary_b = runs
    (state_a, previous_a, it_a), (state_b, previous_b, it_b) = final_state(a), final_state(b)
    assert int(state_a.iteration) == int(state_b.iteration) == 5
    assert int(state_a.sgd_steps) > 0, "no SGD step was taken: the test would be vacuous"
    assert_trees_equal(state_a, state_b)
    assert_trees_equal(previous_a, previous_b)
    assert it_a == it_b == 5
    # the metrics: one line per iteration, identical but for wall-clock timings, the arena
    # of iteration 4 (against the network of iteration 2, restored from checkpoint 3) too
    ma, mb = metrics(a), metrics(b)
    assert [m["iteration"] for m in ma] == [1, 2, 3, 4, 5] == [m["iteration"] for m in mb]
    assert ma == mb
    assert [m.get("previous_iteration") for m in ma] == [None, 2, None, 4, 5]
    assert set(ma[3]["arena"]) == {"random", "previous"}
    assert sum(m["trained"] for m in ma) >= 1 and ma[-1]["loss"] > 0
    assert summary_a["arena"] == summary_b["arena"]


def test_checkpoints_keep_the_previous_network_of_the_last_evaluation(runs):
    a, _, _, _ = runs
    trainer = AlphaZero(CFG)
    mgr = rd.manager(a, read_only=True)
    state3, previous3, it3 = checkpoint.restore(mgr, trainer, step=3)
    assert it3 == 2  # evaluated at 2, checkpointed at 3
    # iteration 3's network is not the previous one: it moved on after the evaluation
    assert not all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(previous3),
                                                        jax.tree.leaves(state3.variables)))


def test_summary_json_shape(runs):
    a, _, _, summary_b = runs
    summary = json.loads((a / rd.SUMMARY_FILE).read_text())
    assert {k: v for k, v in summary.items() if k != "wall_seconds"} == {
        k: v for k, v in summary_b.items() if k != "wall_seconds"}
    assert set(summary) >= {"arena", "wall_seconds", "env", "package_version"}
    assert summary["env"]["id"] == "gomoku" and summary["env"]["version"] == "v1"
    assert set(summary["arena"]) == {"random", "previous"}
    r = summary["arena"]["random"]
    assert set(r) >= {"score", "wins", "losses", "draws"}
    assert all(isinstance(r[k], int) for k in ("wins", "losses", "draws"))
    total = r["wins"] + r["losses"] + r["draws"]
    assert total >= CFG.eval.games
    assert r["score"] == pytest.approx((r["wins"] + 0.5 * r["draws"]) / total)
    assert isinstance(summary["wall_seconds"], float) and summary["wall_seconds"] > 0
    assert summary["iterations"] == 5 and summary["finished"] is True
    assert metrics(a)[-1]["arena"] == summary["arena"]
    assert json.loads((a / rd.CONFIG_FILE).read_text()) == json.loads(CFG.to_json())
    assert load_config(a) == CFG
    # checkpoint_every=1, keep 3: steps 3..5 are there
    assert sorted(rd.manager(a, read_only=True).all_steps()) == [3, 4, 5]


def test_a_finished_run_is_left_alone_or_extended(runs, tmp_path):
    a, _, _, _ = runs
    run = tmp_path / "run"
    shutil.copytree(a, run)
    before = (run / rd.SUMMARY_FILE).read_text()
    lines = (run / rd.METRICS_FILE).read_text()
    again = driver.train(CFG, run, progress=False)
    assert again["already_finished"] is True and again["iterations"] == 5
    assert (run / rd.SUMMARY_FILE).read_text() == before  # not overwritten
    assert (run / rd.METRICS_FILE).read_text() == lines
    # --resume --set run.iterations=6: one more iteration, a new summary
    longer = override(CFG, ["run.iterations=6"])
    extended = driver.train(longer, run, progress=False)
    assert extended["iterations"] == 6 and extended["finished"] and "already_finished" not in \
        extended
    assert json.loads((run / rd.SUMMARY_FILE).read_text())["iterations"] == 6
    assert [m["iteration"] for m in metrics(run)] == [1, 2, 3, 4, 5, 6]
    assert load_config(run) == longer
    with pytest.raises(ValueError, match=r"holds a run with a different config \(optim\."):
        driver.train(override(longer, ["optim.learning_rate=0.5"]), run, progress=False)


def test_checkpoints_save_leaves_by_name(runs, tmp_path):
    a, _, _, _ = runs
    tree = ocp.StandardCheckpointHandler().metadata(
        a / rd.CHECKPOINT_DIR / "5" / "state").tree
    assert set(tree) == {"params", "batch_stats", "opt_state", "buffer", "games", "pending",
                         "key", "iteration", "sgd_steps"}
    assert "stem_conv" in tree["params"] and "board" in tree["games"]

    # What that buys: fields that swap places still load by name; a renamed field fails
    # loudly (orbax's pytree structure, as TrainState is saved).
    @struct.dataclass
    class AB:
        a: jax.Array
        b: jax.Array

    @struct.dataclass
    class BA:
        b: jax.Array
        a: jax.Array

    @struct.dataclass
    class AC:
        a: jax.Array
        c: jax.Array

    mgr = ocp.CheckpointManager(tmp_path / "swap", item_names=("state",), options=
                                ocp.CheckpointManagerOptions(enable_async_checkpointing=False))
    mgr.save(1, args=ocp.args.Composite(state=ocp.args.StandardSave(
        AB(np.zeros(3, np.float32), np.ones(3, np.float32)))))
    spec = jax.ShapeDtypeStruct((3,), np.float32)
    swapped = mgr.restore(1, args=ocp.args.Composite(
        state=ocp.args.StandardRestore(BA(spec, spec))))["state"]
    assert np.all(swapped.a == 0) and np.all(swapped.b == 1)
    with pytest.raises(ValueError, match="2 array.s. differ, e.g. b: saved .*; c: saved "
                                         "nothing"):
        rd.check_saved(tmp_path / "swap" / "1" / "state", AC(spec, spec), "renamed")


def test_checkpoints_record_their_env_and_refuse_another_version(runs, tmp_path):
    a, _, _, _ = runs
    meta = json.loads((a / rd.CHECKPOINT_DIR / "5" / "meta" / "metadata").read_text())
    assert meta["env"] == AlphaZero(CFG).env.describe()
    assert meta["package_version"] and meta["iteration"] == 5
    copy = tmp_path / "old"
    shutil.copytree(a, copy)
    meta_file = copy / rd.CHECKPOINT_DIR / "5" / "meta" / "metadata"
    meta["env"]["version"] = "v0"
    meta_file.write_text(json.dumps(meta))
    # as that version would have written it: its integrity.json matches its files
    rd.write_manifest(meta_file.parent.parent)
    with pytest.raises(ValueError, match="made for gomoku version 'v0'.*retrain"):
        load_network(copy)
    with pytest.raises(ValueError, match="made for gomoku version 'v0'"):
        driver.train(override(CFG, ["run.iterations=6"]), copy, progress=False)
    meta["env"]["id"] = "pgx/connect_four"
    meta_file.write_text(json.dumps(meta))
    rd.write_manifest(meta_file.parent.parent)
    with pytest.raises(ValueError, match="made for game 'pgx/connect_four', not 'gomoku'"):
        load_network(copy)


def test_load_network_from_run_checkpoints_and_step_dirs(runs):
    a, _, _, _ = runs
    state, _, _ = final_state(a)
    for path, step in ((a, None), (a / "checkpoints", None), (a / "checkpoints" / "5", None),
                       (a, 5)):
        model, variables, config, got = load_network(path, step)
        assert config == CFG and model == AlphaZero(CFG).model and got == 5
        for x, y in zip(jax.tree.leaves(variables), jax.tree.leaves(state.variables)):
            np.testing.assert_array_equal(x, y)
    _, older, _, _ = load_network(a / "checkpoints" / "3")
    assert not all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(older.params),
                                                        jax.tree.leaves(state.params)))


def test_bad_inputs(runs, tmp_path):
    a, _, _, _ = runs
    other = override(CFG, ["run.seed=5"])
    with pytest.raises(ValueError, match=r"holds a run with a different config \(run\.seed"):
        driver.train(other, a, progress=False)
    with pytest.raises(ValueError, match="unknown field 'bogus'"):
        override(CFG, ["run.bogus=1"])
    with pytest.raises(ValueError, match="does not exist"):
        load_network(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="not a run directory"):
        load_network(tmp_path)
    with pytest.raises(ValueError, match="has no checkpoint 7"):
        load_network(a, 7)
    # a checkpoint restored into another config's state shape: a clear error up front
    bigger = override(CFG, ["net.channels=8"])
    trainer = AlphaZero(bigger)
    with pytest.raises(ValueError, match=r"does not match this config's train state: \d+ "
                                         r"array\(s\) differ, e.g. batch_stats/"):
        checkpoint.restore(rd.manager(a, read_only=True), trainer)
    # a run whose config.json no longer fits its checkpoints
    copy = tmp_path / "edited"
    shutil.copytree(a, copy)
    checkpoint.save_config(copy, bigger)
    with pytest.raises(ValueError, match=r"checkpoint 5 in .* does not match its config: "
                                         r"\d+ array\(s\) differ, e.g. batch_stats/"):
        load_network(copy)
    with pytest.raises(ValueError, match="unknown agent|agent"):
        driver.train(override(CFG, ["eval.opponents=grandmaster"]), tmp_path / "x",
                   progress=False)
    with pytest.raises(ValueError, match="only 1 device"):
        make_mesh(len(jax.devices()) + 1)
    with pytest.raises(ValueError, match="generates no synthetic examples"):
        AlphaZero(override(CFG, ["game.id=pgx", "replay.synthetic_fraction=0.5"]))


@pytest.mark.slow
def test_one_iteration_on_connect_four():
    """Self-play, the buffer and SGD steps on pgx's connect_four, through the same code."""
    config = override(CFG, ["game.id=pgx", "game.env_id=connect_four", "selfplay.moves=12",
                            "replay.min_size=4"])
    trainer = AlphaZero(config)
    assert trainer.env.id == "pgx/connect_four" and trainer.model.num_actions == 7
    state = trainer.init()
    state, m = trainer.iteration(state)
    m = jax.device_get(m)
    assert int(state.iteration) == 1 and m["games"] > 0 and m["trained"] == 1.0
    assert m["samples_kept"] == int(state.buffer.size) > 0 and np.isfinite(m["loss"])
    assert int(state.sgd_steps) == config.optim.sgd_steps


MULTI_DEVICE = textwrap.dedent("""
    import json, sys
    import jax, numpy as np
    from gomoku_jax import compilation_cache
    compilation_cache.enable()
    from gomoku_jax.train.alphazero import learner
    from gomoku_jax.train.alphazero.trainer import AlphaZero
    from gomoku_jax.train.mesh import make_mesh
    from gomoku_jax.train.config import override
    from gomoku_jax.train import preset

    assert len(jax.devices()) == 8, jax.devices()
    assignments, iterations = json.loads(sys.argv[1]), int(sys.argv[2])
    base = override(preset("test"), assignments)
    out = {"errors": {}}
    for bad, sets in (("games", ["selfplay.games=12", "run.devices=8"]),
                      ("batch", ["optim.batch_size=20", "run.devices=8"])):
        try:
            AlphaZero(override(base, sets))
        except ValueError as e:
            out["errors"][bad] = str(e)
    try:
        make_mesh(9)
    except ValueError as e:
        out["errors"]["mesh"] = str(e)

    def leaves(tree):
        return [(jax.tree_util.keystr(p), np.asarray(x))
                for p, x in jax.tree.flatten_with_path(tree)[0]]

    # The first iterations of the parent's 1-device run, on 8 devices.
    trainer = AlphaZero(override(base, ["run.devices=8"]))
    state = trainer.init()
    history = []
    for _ in range(iterations):
        state, m = trainer.iteration(state)
        history.append({k: float(v) for k, v in m.items()})
    sharding = state.games.board.sharding
    out["devices_8"] = {
        "mesh": int(trainer.mesh.devices.size),
        "board_devices": len(sharding.device_set),
        "shard_shapes": sorted({tuple(s.data.shape)
                                for s in state.games.board.addressable_shards}),
        "spec": str(getattr(sharding, "spec", None)),
        "params_devices": len(jax.tree.leaves(state.params)[0].sharding.device_set),
        "metrics": history}
    state = jax.device_get(state)
    final = leaves(state)
    out["paths"] = [p for p, _ in final]
    np.savez("state.npz", *[x for _, x in final])

    # The gradient of one training batch, drawn from that state's buffer, computed with the
    # batch sharded over 8 devices and on 1 (the all-reduce GSPMD inserts).
    def grads(trainer, params, stats, buffer, key):
        batch = trainer.training_batch(buffer, key)
        obs, legal = learner.batch_inputs(trainer.env, batch)
        def loss(p):
            return learner.losses(trainer.model, p, stats, obs, legal, batch.policy,
                                  batch.value, batch.weight, batch.value_weight, 1.0)[0].loss
        return jax.grad(loss)(params)

    g = {}
    for devices in (8, 1):
        t = trainer if devices == 8 else AlphaZero(override(base, ["run.devices=1"]))
        f = jax.jit(lambda *a, t=t: grads(t, *a), in_shardings=(t.replicated,) * 4)
        g[devices] = jax.device_get(f(state.params, state.batch_stats, state.buffer,
                                      jax.random.key(5)))
    out["grads"] = [{"path": p, "max_abs": float(np.max(np.abs(y))),
                     "max_diff": float(np.max(np.abs(x - y))),
                     "near_zero": int(np.sum(np.abs(y) < 1e-7))}
                    for (p, x), (_, y) in zip(leaves(g[8]), leaves(g[1]))]

    print("RESULT" + json.dumps(out))
""")
# The first iterations of `trained_run`: the first plays (its games are 6 moves long, none
# ends), the next two train, 2 SGD steps each.
ITERATIONS, SGD_STEPS = 3, 4


@pytest.mark.slow
def test_eight_devices_match_one_device(tmp_path, trained_run):
    """8 CPU devices (the games and each training batch sharded, GSPMD) against 1: the first
    iterations of the session's run, everything the two compute, to float noise
    (tests/sharded_runs.py; GMO's sharded iteration: tests/train/test_multiprocess.py). The
    8-device run is a subprocess: the number of CPU devices is fixed when JAX starts."""
    a, iterations = trained_run, ITERATIONS
    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": f"{os.environ.get('XLA_FLAGS', '')} "
                        f"--xla_force_host_platform_device_count=8"}
    proc = subprocess.run([sys.executable, "-c", MULTI_DEVICE, json.dumps(TRAINED_SETS),
                           str(iterations)], env=env, capture_output=True, text=True,
                          cwd=tmp_path, timeout=600)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT")]
    assert proc.returncode == 0 and lines, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = json.loads(lines[-1][len("RESULT"):])
    eight = out["devices_8"]
    # the self-play boards really are split over the 8 devices, one board each
    assert eight["mesh"] == 8 and eight["board_devices"] == 8
    assert eight["shard_shapes"] == [[1, 7, 7]] and "data" in eight["spec"]
    assert eight["params_devices"] == 8  # replicated
    # the same iterations as on one device: they played, then trained
    assert [m["trained"] for m in eight["metrics"]] == [0.0] + [1.0] * (iterations - 1)
    sharded_runs.assert_metrics_match(eight["metrics"], metrics(a)[:iterations])
    state1, _, _ = checkpoint.restore(rd.manager(a, read_only=True), AlphaZero(CFG),
                                      step=iterations)
    assert int(state1.sgd_steps) == SGD_STEPS
    with np.load(tmp_path / "state.npz") as data:
        state8 = {p: data[f"arr_{i}"] for i, p in enumerate(out["paths"])}
    sharded_runs.assert_leaves_match(state8, sharded_runs.leaves(state1),
                                     CFG.optim.learning_rate, SGD_STEPS,
                                     is_param=lambda path: path.startswith(".params"))
    # the gradients themselves agree to float noise
    for r in out["grads"]:
        assert r["max_diff"] <= 1e-5 * max(r["max_abs"], 1e-3), r

    errors = out["errors"]
    assert "selfplay.games=12 must be a multiple of the 8 devices" in errors["games"]
    assert "optim.batch_size=20 must be a multiple of the 8 devices" in errors["batch"]
    assert "run.devices=9 but only 8 device(s)" in errors["mesh"]


def test_arena_table_signs_infinite_elo_by_the_score():
    table = arena_table({
        "random": {"wins": 8, "draws": 0, "losses": 0, "score": 1.0, "elo": None},
        "heuristic": {"wins": 0, "draws": 0, "losses": 8, "score": 0.0, "elo": None},
        "previous": {"wins": 5, "draws": 0, "losses": 3, "score": 0.625, "elo": 88.7}})
    assert table.splitlines()[2:] == ["| random | 8-0-0 | 1.000 | +∞ |",
                                      "| heuristic | 0-0-8 | 0.000 | -∞ |",
                                      "| previous | 5-0-3 | 0.625 | +89 |"]
