"""A comparison's results: the Elo scale fitted over its matches, each arm's curve with
intervals, as JSON data, markdown tables and a plot.

    analysis = analyze(spec, rows)        # rows: matches.jsonl's, see `runner.Store`
    print(markdown(analysis))
    plot(analysis, "curves.png")
"""

from __future__ import annotations

import json
import math
import pathlib
from typing import Any, Sequence

import numpy as np

from gomoku_jax.compare import stats
from gomoku_jax.compare.spec import Comparison
from gomoku_jax.markdown import table as markdown_table


def analyze(spec: Comparison, rows: Sequence[dict]) -> dict:
    """JSON data: the spec, the references' ratings, every rated checkpoint (arm, seed,
    point, iteration, training seconds, Elo, game standard deviation) and per arm its
    points (`stats.ArmPoint` plus the mean iteration and seconds over seeds). Points not
    rated for every seed yet are left out of the arm's curve."""
    results = [stats.Result(r["a"], r["b"], r["wins"], r["draws"], r["losses"]) for r in rows]
    rated: dict[tuple[str, int, int], dict] = {}
    for r in rows:
        if r.get("point") is not None:
            rated.setdefault((r["run"], r["seed"], r["point"]), r)
    names = list(spec.references) + [r["a"] for r in rated.values()]
    ratings = stats.fit_scale(names, results)
    checkpoints = []
    for (arm, seed, point), r in rated.items():
        checkpoints.append({"arm": arm, "seed": seed, "point": point,
                            "iteration": r["iteration"], "seconds": r["seconds"],
                            "elo": ratings[r["a"]],
                            "game_sd": math.sqrt(stats.game_variance(r["a"], ratings, results))})
    arms, complete = {}, {}
    for arm in spec.arms:
        curve = []
        for point in range(1, spec.budget.points + 1):
            got = sorted((c for c in checkpoints if c["arm"] == arm.name
                          and c["point"] == point), key=lambda c: c["seed"])
            if len(got) < len(spec.seeds):
                continue
            complete[(arm.name, point)] = got
            ap = stats.arm_point([c["elo"] for c in got], [c["game_sd"] ** 2 for c in got])
            curve.append({"point": point,
                          "iteration": float(np.mean([c["iteration"] for c in got])),
                          "seconds": float(np.mean([c["seconds"] for c in got])),
                          **ap.to_dict()})
        arms[arm.name] = curve
    last = spec.budget.points
    gains = {a.name: _paired(complete[(a.name, 1)], complete[(a.name, last)])
             for a in spec.arms if (a.name, 1) in complete and (a.name, last) in complete}
    final = [a.name for a in spec.arms if (a.name, last) in complete]
    differences = {b: {a: _paired(complete[(a, last)], complete[(b, last)]) for a in final}
                   for b in final}
    return {"spec": spec.to_dict(),
            "references": {r: ratings[r] for r in spec.references},
            "checkpoints": sorted(checkpoints, key=lambda c: (c["arm"], c["seed"],
                                                              c["point"])),
            "arms": arms, "gains": gains, "differences": differences}


def _paired(a: list[dict], b: list[dict]) -> dict:
    """B - A over seeds (`stats.paired_difference`), from two lists of checkpoints sorted
    by seed, JSON-ready."""
    return stats.paired_difference([c["elo"] for c in a], [c["elo"] for c in b],
                                   [c["game_sd"] ** 2 for c in a],
                                   [c["game_sd"] ** 2 for c in b]).to_dict()


def _cell(p: dict) -> str:
    return f"{p['mean']:+.0f} [{p['lower']:+.0f}, {p['upper']:+.0f}]"


def markdown(analysis: dict) -> str:
    """The arm × point table of mean Elo [95% interval] with each arm's gain from its first
    point to its last (paired by seed), the iterations and seconds behind each point, the
    differences between arms at the last point (paired by seed), and the references'
    ratings."""
    spec = analysis["spec"]
    budget = spec["budget"]
    points = budget["points"]
    unit = "iterations" if budget["kind"] == "iterations" else "training seconds"
    head = (f"Budget: {budget['amount']:g} {unit} per run, rated at {points} points; "
            f"{len(spec['seeds'])} seed(s) per arm; base preset {spec['preset']}"
            + (f" with {' '.join(spec['base'])}" if spec["base"] else "") + ". "
            f"Each checkpoint played `{spec['eval_agent']}` against "
            f"{', '.join(spec['references'])}, {spec['games']} games each (every opening, both "
            f"colours); one Elo scale, {spec['references'][0]} = 0. Cells: mean Elo over "
            f"seeds [95% interval over seeds and games].")
    columns = [f"{100 * k // points}%" for k in range(1, points + 1)]
    elo_rows, cost_rows = [], []
    for arm in spec["arms"]:
        curve = {p["point"]: p for p in analysis["arms"].get(arm["name"], [])}
        gain = analysis["gains"].get(arm["name"])
        elo_rows.append([arm["name"]] + [_cell(curve[k]) if k in curve else "—"
                                         for k in range(1, points + 1)]
                        + [_cell(gain) if gain else "—"])
        cost_rows.append([arm["name"]] + [
            f"{curve[k]['iteration']:.0f} it, {curve[k]['seconds']:.0f} s" if k in curve
            else "—" for k in range(1, points + 1)])
    arms = markdown_table(["arm"] + columns + [f"gain {columns[0]} → {columns[-1]}"],
                          elo_rows)
    cost = markdown_table(["arm"] + columns, cost_rows)
    final = list(analysis["differences"])
    differences = markdown_table(
        ["row − column"] + final,
        [[b] + ["—" if a == b else _cell(analysis["differences"][b][a]) for a in final]
         for b in final])
    refs = markdown_table(["reference", "Elo"], [[r, f"{e:+.0f}"] for r, e in
                                                 analysis["references"].items()])
    overrides = markdown_table(["arm", "overrides"], [
        [a["name"], " ".join(f"`{o}`" for o in a["overrides"]) or "(the base)"]
        for a in spec["arms"]])
    return "\n\n".join([
        head, arms, "Mean training iterations and seconds (compilation not counted) at each "
        "point:", cost, f"Elo differences at {columns[-1]}, row arm − column arm, paired by "
        f"seed (seed s of every arm draws the same keys: with one net config, the same "
        f"initial network) [95% interval]:",
        differences, refs, overrides])


def plot(analysis: dict, path: str) -> None:
    """A PNG: Elo against training iterations and against training seconds, one line per
    arm (its mean over seeds) with its 95% band, the references as dotted lines."""
    from matplotlib.figure import Figure  # not pyplot: no global backend or figure state

    fig = Figure(figsize=(12, 4.5))
    axes = fig.subplots(1, 2, sharey=True)
    for (axis, x, label) in ((axes[0], "iteration", "training iterations"),
                             (axes[1], "seconds", "training seconds")):
        for name, curve in analysis["arms"].items():
            if not curve:
                continue
            xs = [p[x] for p in curve]
            line, = axis.plot(xs, [p["mean"] for p in curve], marker="o", label=name)
            axis.fill_between(xs, [p["lower"] for p in curve], [p["upper"] for p in curve],
                              color=line.get_color(), alpha=0.15)
        for ref, rating in analysis["references"].items():
            axis.axhline(rating, color="grey", linestyle=":", linewidth=1)
            axis.annotate(ref, (1.0, rating), xycoords=("axes fraction", "data"),
                          fontsize=7, color="grey", ha="right", va="bottom")
        axis.set_xlabel(label)
        axis.grid(alpha=0.3)
    axes[0].set_ylabel(f"Elo ({analysis['spec']['references'][0]} = 0)")
    axes[1].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def write(analysis: dict, out: Any) -> dict[str, str]:
    """results.md, results.json and curves.png in the directory `out`; {kind: path}."""
    out = pathlib.Path(out)
    paths = {"markdown": out / "results.md", "json": out / "results.json",
             "plot": out / "curves.png"}
    paths["markdown"].write_text(markdown(analysis) + "\n")
    paths["json"].write_text(json.dumps(analysis, indent=1))
    plot(analysis, str(paths["plot"]))
    return {k: str(v) for k, v in paths.items()}
