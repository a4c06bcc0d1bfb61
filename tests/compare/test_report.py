"""compare.report's wiring, on synthetic match rows with known strengths (no training, no
JAX): ratings near the truth, cells from the pooled seeds, the families with Holm and
simultaneous intervals, separated checkpoints as bounds, old rows, and the markdown that
says when a run can resolve nothing. The statistics themselves are checked by simulation
in tests/eval (test_rating.py, test_seeds.py)."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest

from gomoku_jax.compare import report
from gomoku_jax.compare.spec import Budget, Comparison, parse_arm
from gomoku_jax.eval import seeds as seedstats

LN = math.log(10.0) / 400.0
REFS = {"r0": 0.0, "r1": 400.0, "r2": 800.0}
EDGE, NU = 150.0, 0.3  # first-move edge (Elo) and Davidson's draw parameter
TRUTH = {"a": (200.0, 450.0), "b": (300.0, 700.0)}  # each arm's mean at points 1, 2
SEEDS = (0, 1, 2)


def _results(rng, d_elo: float, n: int) -> tuple[int, int, int]:
    """The first mover's (wins, draws, losses) in n Davidson games at Elo difference d."""
    d = d_elo * LN
    z = math.exp(d / 2) + math.exp(-d / 2) + NU
    pw, pd = math.exp(d / 2) / z, NU / z
    u = rng.random(n)
    return int(np.sum(u < pw)), int(np.sum((u >= pw) & (u < pw + pd))), int(np.sum(u >= pw + pd))


def match_row(rng, a, b, ra, rb, g, distinct=None, **where) -> dict:
    """A `matches.jsonl` row: g games with A first, g with B first."""
    first = _results(rng, ra - rb + EDGE, g)
    b_first = _results(rng, rb - ra + EDGE, g)
    second = (b_first[2], b_first[1], b_first[0])
    keys = ("wins", "draws", "losses")
    return {**where, "a": a, "b": b, **{k: x + y for k, x, y in zip(keys, first, second)},
            "as_first": dict(zip(keys, first)), "as_second": dict(zip(keys, second)),
            "distinct_games": 2 * g if distinct is None else distinct}


def spec_for(arms=("a", "b"), seeds=SEEDS, points=2) -> Comparison:
    return Comparison(preset="test", arms=tuple(parse_arm(f"{a}:") for a in arms),
                      seeds=tuple(seeds), budget=Budget("iterations", 2 * points, points),
                      references=tuple(REFS), eval_agent="policy:evaluator=network")


def simulate(truth=TRUTH, seeds=SEEDS, g=16, distinct=24, seed_sd=60.0, rng_seed=0,
             extra: dict | None = None) -> tuple[list[dict], dict]:
    """Rows of a comparison (the references' round robin, every checkpoint against every
    reference, both colours, `distinct` of 2 g games distinct) and the true ratings;
    `extra`: {label: true rating} overrides."""
    rng = np.random.default_rng(rng_seed)
    names = list(REFS)
    rows = [match_row(rng, x, y, REFS[x], REFS[y], 32, run="pool", seed=None, point=None)
            for i, x in enumerate(names) for y in names[i + 1:]]
    true = {}
    for arm, pts in truth.items():
        for s in seeds:
            offset = rng.normal(0.0, seed_sd)
            for p, mean in enumerate(pts, 1):
                label = f"{arm}/seed{s}/p{p}"
                true[label] = (extra or {}).get(label, mean + offset)
                for r in REFS:
                    rows.append(match_row(rng, label, r, true[label], REFS[r], g, distinct,
                                          run=arm, seed=s, point=p, iteration=2 * p,
                                          seconds=1.5 * p + 0.1 * s))
    return rows, true


@pytest.fixture(scope="module")
def base():
    rows, true = simulate()
    return report.analyze(spec_for(), rows), rows, true


def test_ratings_are_near_the_truth(base):
    analysis, _, true = base
    assert analysis["fit"]["first_move"] == pytest.approx(EDGE, abs=3 * analysis["fit"][
        "first_move_se"])
    for c in analysis["checkpoints"]:
        assert c["status"] == "rated"
        assert abs(c["elo"] - true[c["label"]]) < 4 * c["se"], c
    for name, rating in REFS.items():
        ref = analysis["references"][name]
        assert ref["lower"] <= rating <= ref["upper"] or abs(ref["elo"] - rating) < 4 * ref["se"]
    assert analysis["references"]["r0"]["elo"] == 0.0 and analysis["fit"]["anchor"] == "r0"


def test_cells_are_the_pooled_seeds(base):
    analysis, _, _ = base
    for point in (1, 2):
        pool = analysis["seeds"][str(point)]
        cells = {a: next(p for p in analysis["arms"][a] if p["point"] == point) for a in "ab"}
        values = np.array([cells[a]["ratings"] for a in "ab"])
        pooled = seedstats.pool_seeds(values)
        assert pool["raw_variance"] == pytest.approx(float(pooled.variance))
        assert pool["variance"] == pytest.approx(max(pool["raw_variance"],
                                                     pool["game_variance"]))
        assert pool["dof"] == 4 and pool["cells"] == ["a", "b"]
        assert pool["game_variance"] > 0 and pool["scale_variance"] >= 0
        for cell in cells.values():
            assert cell["mean"] == pytest.approx(np.mean(cell["ratings"]))
            assert cell["se"] ** 2 == pytest.approx(pool["variance"] / 3
                                                    + pool["scale_variance"])
            assert cell["upper"] - cell["mean"] == pytest.approx(2.776445 * cell["se"],
                                                                rel=1e-5)
            assert cell["distinct_games"] == 3 * 3 * 24 and cell["games"] == 3 * 3 * 32
            assert cell["training_seconds"] == pytest.approx(
                {"mean": 1.5 * point + 0.1, "min": 1.5 * point, "max": 1.5 * point + 0.2})


def test_differences_gains_and_their_families(base):
    analysis, _, _ = base
    final = {a: analysis["arms"][a][-1] for a in "ab"}
    d = analysis["differences"]["b"]["a"]
    var = analysis["seeds"]["2"]["variance"]
    assert d["mean"] == pytest.approx(final["b"]["mean"] - final["a"]["mean"])
    assert d["se"] == pytest.approx(math.sqrt(var * (1 / 3 + 1 / 3)))  # unpaired
    assert analysis["differences"]["a"]["b"]["mean"] == pytest.approx(-d["mean"])
    # The true difference (250) is well inside what 3 seeds x 96 games resolve.
    assert d["lower"] > 0
    kinds = [f["kind"] for f in analysis["families"]]
    assert kinds == ["differences", "gains"]
    diffs, gains = analysis["families"]
    assert [c["label"] for c in diffs["comparisons"]] == ["b − a"]
    assert [c["label"] for c in gains["comparisons"]] == ["a", "b"]
    ref = seedstats.adjust([c["mean"] for c in gains["comparisons"]],
                           [c["se"] for c in gains["comparisons"]], 4)
    assert [c["holm"] for c in gains["comparisons"]] == pytest.approx(ref.holm.tolist())
    assert [c["simultaneous"][1] for c in gains["comparisons"]] == pytest.approx(
        ref.upper.tolist())
    for arm in "ab":
        g = analysis["gains"][arm]
        first = analysis["arms"][arm][0]["ratings"]
        per_seed = np.subtract(analysis["arms"][arm][1]["ratings"], first)
        assert g["per_seed"] == pytest.approx(per_seed.tolist())
        assert g["mean"] == pytest.approx(per_seed.mean()) and g["lower"] > 0
        assert g["holm"] is not None and len(g["simultaneous"]) == 2
    for f in analysis["families"]:
        r = f["resolution"]
        assert not r["unresolved"] and r["seeds_to_halve"] == [12, 12]
        assert r["detectable"][0] == pytest.approx(min(c["upper"] - c["mean"]
                                                       for c in f["comparisons"]))


def test_markdown_and_plot(base, tmp_path):
    analysis, _, _ = base
    text = report.markdown(analysis)
    for needle in ("| arm | 50% | 100% | gain 50% → 100% |", "Holm p", "simultaneous [95%]",
                   "What this design can resolve", "| a | 216 / 288 | 216 / 288 |",
                   "1.6 s (1.5–1.7)", "| b − a |", "first-move term", "| r2 |"):
        assert needle in text, needle
    assert "cannot separate" not in text and "out of range" not in text
    json.dumps(analysis, allow_nan=False)  # JSON proper: no nan or infinity
    paths = report.write(analysis, tmp_path)
    png = (tmp_path / "curves.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and set(paths) == {"markdown", "json", "plot"}


def test_a_separated_checkpoint_is_a_bound_and_leaves_the_pool():
    rows, _ = simulate(truth={**TRUTH, "c": (250.0, 600.0)},
                       extra={"c/seed1/p2": 4000.0})
    analysis = report.analyze(spec_for(arms=("a", "b", "c")), rows)
    sep = next(c for c in analysis["checkpoints"] if c["label"] == "c/seed1/p2")
    assert sep["status"] == "above" and sep["elo"] is None and sep["upper"] is None
    assert sep["bound"] > 800.0 and sep["lower"] == sep["bound"]
    assert analysis["out_of_range"] == ["c/seed1/p2"]
    cell = analysis["arms"]["c"][-1]
    assert not cell["in_range"] and cell["mean"] is None and cell["out_of_range"] == 1
    assert analysis["seeds"]["2"]["cells"] == ["a", "b"]  # c left out at the last point
    assert analysis["seeds"]["1"]["cells"] == ["a", "b", "c"]
    assert analysis["gains"]["c"] == {"mean": None, "in_range": False}
    assert set(analysis["differences"]) == {"a", "b"}
    text = report.markdown(analysis)
    assert "out of the ladder's range" in text
    assert f"| c/seed1/p2 | > {sep['bound']:+.0f} |" in text
    assert "1/3 seeds" in text


def test_every_seed_out_of_range_shows_the_bound():
    extra = {f"c/seed{s}/p2": 4000.0 for s in SEEDS}
    rows, _ = simulate(truth={**TRUTH, "c": (250.0, 600.0)}, extra=extra)
    analysis = report.analyze(spec_for(arms=("a", "b", "c")), rows)
    cell = analysis["arms"]["c"][-1]
    bounds = [c["bound"] for c in analysis["checkpoints"] if c["label"] in extra]
    assert cell["lower"] == min(bounds)
    assert f"> {min(bounds):+.0f} (out of range)" in report.markdown(analysis)


def test_old_rows_still_load():
    rows, true = simulate(truth={"a": (200.0, 450.0), "b": (300.0, 700.0)})
    old = copy.deepcopy(rows)
    for r in old:
        for k in ("as_first", "as_second", "distinct_games"):
            r.pop(k)
    analysis = report.analyze(spec_for(), old)
    assert not analysis["fit"]["first_move_fitted"]
    text = report.markdown(analysis)
    assert "no per-colour record" in text and "first-move term could not be fitted" in text
    assert "do not count their distinct games" in text and "? / 288" in text
    assert all(c["status"] == "rated" for c in analysis["checkpoints"])
    # Half the rows old: the term is fitted from the others, and the report says so.
    mixed = rows[: len(rows) // 2] + old[len(rows) // 2:]
    analysis = report.analyze(spec_for(), mixed)
    assert analysis["fit"]["first_move_fitted"]
    assert "pulls the first-move term towards 0" in report.markdown(analysis)


def test_a_small_run_says_it_cannot_separate_the_arms():
    """2 arms x 2 seeds and a few games (the `test` preset's first try): intervals of
    hundreds of Elo, and the markdown says plainly that nothing can be read from them."""
    rows, _ = simulate(seeds=(0, 1), g=4, distinct=8, seed_sd=150.0, rng_seed=3)
    analysis = report.analyze(spec_for(seeds=(0, 1)), rows)
    diffs = analysis["families"][0]
    assert diffs["kind"] == "differences" and diffs["resolution"]["unresolved"]
    assert "This run cannot separate the arms" in report.markdown(analysis)


def test_one_seed_uses_the_games_alone():
    rows, _ = simulate(seeds=(0,))
    analysis = report.analyze(spec_for(seeds=(0,)), rows)
    assert analysis["seeds"]["2"]["dof"] is None
    d = analysis["differences"]["b"]["a"]
    assert d["dof"] is None and d["se"] > 0  # normal, from the fit's covariance
    assert "One seed per arm" in report.markdown(analysis)
