"""The network shipped with the package: small, loads without a checkpoint path, records its
run, and plays through the command lines' `trained` spec."""

from __future__ import annotations

import dataclasses
import json

import pytest

from gomoku_jax import players
from gomoku_jax.cli import common


def test_shipped_network_is_small_and_records_its_run():
    """The shipped network is step 112 of a fine-tuning run warm-started from the earlier
    shipped network (step 240 of a CPU run); its config and metrics say so."""
    path = players.default_network_path()
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    assert size <= 5 * 2 ** 20, size
    config = json.loads((path / "config.json").read_text())
    assert config["game"]["board_size"] == 15 and config["game"]["rule"] == "freestyle"
    assert config["run"]["init_from"] == "default"
    records = [json.loads(line) for line in (path / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in records] == list(range(1, 113))
    assert records[0]["init_from"]["step"] == 240
    assert [int(p.name) for p in (path / "checkpoints").iterdir()] == [112]


@pytest.fixture(scope="module")
def network():
    return players.default_network()


def test_default_network_loads(network):
    assert network.step == 112 and network.env.board_size == 15
    assert network.model.num_params() == 394_486


def test_specs_that_need_a_network_get_the_shipped_one(network):
    assert common.needs_network(["heuristic", "trained:num_simulations=8"])
    assert common.needs_network(["mcts:evaluator=network"])
    assert not common.needs_network(["heuristic", "mcts"])
    assert players.load_for_cli(None) is None
    assert players.load_for_cli(None, default=True).step == network.step
    with pytest.raises(SystemExit, match="--step 3 needs --checkpoint"):
        players.load_for_cli(None, 3, default=True)



def test_tactics_plays_the_policy_head_of_the_shipped_network(network, tmp_path, capsys):
    """`gomoku-jax tactics --agents policy:evaluator=network` without --checkpoint: the
    shipped network's policy head plays a legal move in one puzzle of each category, on
    states with the network's observation planes; a suite of another game is refused."""
    from gomoku_jax import cli
    from gomoku_jax.games.gomoku import tactics_suite as tactics

    suite = tactics.default_suite()
    first = {}
    for p in suite.puzzles:
        first.setdefault(p.category, p)
    small = dataclasses.replace(suite, puzzles=tuple(first.values()))
    path, js = tmp_path / "suite.json", tmp_path / "t.json"
    tactics.save(small, path)
    # Batches of one: the batches and the single-move timing are then one compiled program.
    assert cli.main(["tactics", "--agents", "policy:evaluator=network", "--suite", str(path),
                     "--batch-size", "1", "--json", str(js)]) == 0
    assert "| policy:evaluator=network |" in capsys.readouterr().out
    [record] = json.loads(js.read_text())["results"]
    assert sum(t for _, t in record["solved"].values()) == len(first)
    for p in small.puzzles:
        assert p.board.reshape(-1)[record["actions"][p.id]] == 0, p.id
    states = small.puzzles_for_eval(network.game_spec)
    assert all(s.config == network.env.config for _, _, s, _ in states)

    tactics.save(tactics.generate(9, 1, seed=0), tmp_path / "nine.json")
    with pytest.raises(SystemExit, match="the network plays .*; the suite is 9x9"):
        cli.main(["tactics", "--agents", "policy:evaluator=network",
                  "--suite", str(tmp_path / "nine.json")])
