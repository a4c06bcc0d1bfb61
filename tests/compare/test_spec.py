"""compare.spec: arms, budgets and the configs a comparison trains."""

from __future__ import annotations

import pytest

from gomoku_jax.compare.spec import Arm, Budget, Comparison, default_references, parse_arm

ARMS = (parse_arm("a: search.algorithm=puct"), parse_arm("b: selfplay.num_simulations=2"))


def comparison(**kw) -> Comparison:
    fields = dict(preset="test", arms=ARMS, seeds=(0, 1), budget=Budget("iterations", 4, 2),
                  references=("random", "heuristic"), eval_agent="policy:evaluator=network")
    return Comparison(**{**fields, **kw})


def test_parse_arm():
    arm = parse_arm(" gumbel-n2 : search.algorithm=gumbel  selfplay.num_simulations=2 ")
    assert arm == Arm("gumbel-n2", ("search.algorithm=gumbel", "selfplay.num_simulations=2"))
    assert parse_arm("base:") == Arm("base", ())


@pytest.mark.parametrize("text, message", [
    ("no-colon", "name: key=value"),
    ("a: search.algorithm", "not a key=value"),
    ("a b: x.y=1", "use letters"),
    ("a: run.seed=3", "set by the comparison"),
    ("a: run.iterations=3", "set by the comparison"),
    ("a: eval.games=8", "set by the comparison"),
    ("a: preset=nope", "unknown preset"),
    ("a: preset=test preset=quick", "given twice"),
])
def test_parse_arm_refuses(text, message):
    with pytest.raises(ValueError, match=message):
        parse_arm(text)


def test_an_arm_from_another_algorithms_preset():
    """`preset=NAME` trains the arm from that preset (of any algorithm), with the base
    overrides and the arm's own on top; the spec keeps it through its JSON."""
    arm = parse_arm("mz: preset=muzero_test muzero.unroll_steps=2")
    assert arm == Arm("mz", ("muzero.unroll_steps=2",), "muzero_test")
    spec = comparison(arms=(ARMS[0], arm), base=("optim.learning_rate=0.01",))
    config = spec.config(arm, 3)
    assert config.algo == "muzero" and config.muzero.unroll_steps == 2
    assert config.optim.learning_rate == 0.01 and config.run.seed == 3
    assert spec.config(ARMS[0], 3).algo == "alphazero"
    assert Comparison.from_dict(spec.to_dict()) == spec
    assert "preset" not in ARMS[0].to_dict()  # a spec saved before arms had presets


def test_budget_targets():
    assert Budget("iterations", 12, 4).targets() == (3, 6, 9, 12)
    assert Budget("iterations", 10, 3).targets() == (3, 7, 10)
    assert Budget("seconds", 60.0, 3).targets() == (20.0, 40.0, 60.0)
    for bad in (dict(kind="minutes", amount=3), dict(kind="iterations", amount=2, points=3),
                dict(kind="seconds", amount=-1.0), dict(kind="iterations", amount=2.5),
                dict(kind="seconds", amount=float("nan")), dict(kind="seconds", amount=9,
                                                                points=0)):
        with pytest.raises(ValueError):
            Budget(**bad)


def test_config_owns_seed_budget_and_rating():
    spec = comparison()
    config = spec.config(ARMS[1], 7)
    assert config.run.seed == 7 and config.run.iterations == 4
    assert config.selfplay.num_simulations == 2
    assert config.eval.opponents == () and config.eval.every == 0
    assert config.run.keep_checkpoints == 2
    seconds = comparison(budget=Budget("seconds", 30.0, 3), max_iterations=9)
    assert seconds.config(ARMS[0], 0).run.iterations == 9


def test_round_trip_and_validation():
    spec = comparison(base=("optim.learning_rate=0.01",))
    assert Comparison.from_dict(spec.to_dict()) == spec
    for bad in (dict(arms=()), dict(arms=(ARMS[0], ARMS[0])), dict(seeds=(1, 1)),
                dict(seeds=()), dict(references=()), dict(references=("random", "random")),
                dict(preset="nope"), dict(games=0)):
        with pytest.raises(ValueError):
            comparison(**bad)


def test_default_references():
    assert default_references("gomoku")[0] == "random"
    assert "fauxgo_heuristic" in default_references("fauxgo")
    assert default_references("pgx")[0] == "random"
