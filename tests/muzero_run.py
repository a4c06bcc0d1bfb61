"""A tiny MuZero run directory for the tests that load and play one (tests/ is on the import
path): config.json and one checkpoint, written as the training driver writes them
(`train.checkpoint.writer` and `save`), of the network of `muzero_helpers.tiny_muzero`."""

from __future__ import annotations

import dataclasses
import json
import pathlib
import types

import jax
from muzero_helpers import tiny_muzero

from gomoku_jax import configs
from gomoku_jax.players import run_dir as rd
from gomoku_jax.search.puct import PUCT
from gomoku_jax.train import checkpoint

STEP = 3
SEARCH = PUCT(q_transform="parent", pb_c_init=1.5)  # the run's (self-play) search
AGENT_SIMULATIONS = 4


def saved_variables():
    """The variables the run's checkpoint holds: the tiny network's, every leaf moved off
    its initial value (BatchNorm statistics included), so that a load that kept the initial
    values would be seen."""
    _, _, variables = tiny_muzero()
    leaves, tree = jax.tree.flatten(variables)
    keys = jax.random.split(jax.random.key(7), len(leaves))
    return jax.tree.unflatten(tree, [x + 0.1 * jax.random.uniform(k, x.shape, x.dtype)
                                     for x, k in zip(leaves, keys)])


def write_run(directory: pathlib.Path) -> pathlib.Path:
    """`directory` as a MuZero run of 5×5 Gomoku (four in a row): config.json tagged
    `"algo": "muzero"`, `"player": "muzero"` with sections game, net, search and eval, and
    checkpoint `STEP` of `saved_variables()`."""
    env, network, _ = tiny_muzero()
    data = {rd.ALGO_KEY: "muzero", rd.PLAYER_KEY: "muzero",
            "game": configs.to_dict(env.spec, rd.KINDS),
            "net": dataclasses.asdict(network.config),
            "search": configs.to_dict(SEARCH, rd.KINDS),
            "eval": {"agent_simulations": AGENT_SIMULATIONS}}
    directory.mkdir(parents=True, exist_ok=True)
    (directory / rd.CONFIG_FILE).write_text(json.dumps(data, indent=1))
    variables = saved_variables()
    trainer = types.SimpleNamespace(
        config=types.SimpleNamespace(algo="muzero", player="muzero"), env=env,
        network=lambda state: state)
    mgr = checkpoint.writer(directory, keep=3)
    checkpoint.save(mgr, STEP, trainer, variables, variables, STEP)
    mgr.close()
    return directory
