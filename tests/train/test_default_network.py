"""The network shipped with the package: small, loads without a checkpoint path, records its
run, and plays through the command lines' `trained` spec."""

from __future__ import annotations

import json

import pytest

from gomoku_jax.cli import common
from gomoku_jax.train import trained


def test_shipped_network_is_small_and_records_its_run():
    path = trained.default_network_path()
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    assert size <= 5 * 2 ** 20, size
    config = json.loads((path / "config.json").read_text())
    assert config["game"]["board_size"] == 15 and config["game"]["rule"] == "freestyle"
    summary = json.loads((path / "summary.json").read_text())
    assert summary["finished"] and summary["iterations"] == 240
    assert (path / "metrics.jsonl").read_text().count("\n") == 240


@pytest.fixture(scope="module")
def network():
    return trained.default_network()


def test_default_network_loads(network):
    assert network.step == 240 and network.env.board_size == 15
    assert network.model.num_params() == 394_486


def test_specs_that_need_a_network_get_the_shipped_one(network):
    assert common.needs_network(["heuristic", "trained:num_simulations=8"])
    assert common.needs_network(["mcts:evaluator=network"])
    assert not common.needs_network(["heuristic", "mcts"])
    assert trained.load_for_cli(None) is None
    assert trained.load_for_cli(None, default=True).step == network.step
    with pytest.raises(SystemExit, match="--step 3 needs --checkpoint"):
        trained.load_for_cli(None, 3, default=True)
