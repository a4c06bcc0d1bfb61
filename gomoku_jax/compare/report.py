"""A comparison's results: one rating fit over all its games, each arm's curve with
intervals pooled over seeds, the families of comparisons with adjusted intervals, what the
design can resolve; as JSON data, markdown tables and a plot. The methods are in `stats`.

    analysis = analyze(spec, rows)        # rows: matches.jsonl's, see `runner.Store`
    print(markdown(analysis))
    plot(analysis, "curves.png")
"""

from __future__ import annotations

import json
import math
import pathlib
from typing import Any, Optional, Sequence

import numpy as np

from gomoku_jax.compare import stats
from gomoku_jax.compare.ladder import markdown as ladder_markdown
from gomoku_jax.compare.spec import Comparison
from gomoku_jax.eval import rating
from gomoku_jax.eval.rating import json_number
from gomoku_jax.markdown import table as markdown_table


def _players(spec: Comparison, rows: Sequence[dict]) -> tuple[list[str], dict[str, dict]]:
    """Every player's name (the spec's references first, then any other non-checkpoint
    player, then the checkpoints) and {checkpoint label: its row's arm, seed, point,
    iteration, seconds}."""
    checkpoints: dict[str, dict] = {}
    for r in rows:
        if r.get("point") is not None and r["a"] not in checkpoints:
            checkpoints[r["a"]] = {"arm": r["run"], "seed": r["seed"], "point": r["point"],
                                   "iteration": r.get("iteration"),
                                   "seconds": r.get("seconds")}
    others = list(spec.references)
    for r in rows:
        for n in (r["a"], r["b"]):
            if n not in checkpoints and n not in others:
                others.append(n)
    arm_order = {a.name: i for i, a in enumerate(spec.arms)}
    labels = sorted(checkpoints, key=lambda n: (arm_order.get(checkpoints[n]["arm"], 1 << 30),
                                                checkpoints[n]["arm"], checkpoints[n]["seed"],
                                                checkpoints[n]["point"]))
    return others + labels, checkpoints


def _game_counts(rows: Sequence[dict]) -> tuple[dict[str, int], dict[str, Optional[int]]]:
    """Per player: games played, and distinct games (None when a row did not count them)."""
    played: dict[str, int] = {}
    distinct: dict[str, Optional[int]] = {}
    for r in rows:
        g, d = stats.row_games(r), r.get("distinct_games")
        for n in (r["a"], r["b"]):
            played[n] = played.get(n, 0) + g
            if n not in distinct or distinct[n] is not None:
                distinct[n] = None if d is None else distinct.get(n, 0) + int(d)
    return played, distinct


def _bound(fit: rating.GameFit, i: int) -> Optional[float]:
    """A separated player's finite bound (None if it has none)."""
    if fit.status[i] == rating.ABOVE:
        return json_number(fit.lower[i])
    if fit.status[i] == rating.BELOW:
        return json_number(fit.upper[i])
    return None


def _player(fit: rating.GameFit, i: int, played: int, distinct: Optional[int]) -> dict:
    return {"elo": json_number(fit.ratings[i]), "se": json_number(fit.stderr[i]),
            "lower": json_number(fit.lower[i]), "upper": json_number(fit.upper[i]),
            "status": fit.status[i], "bound": _bound(fit, i), "games": played,
            "distinct_games": distinct}


def _spread(values: Sequence[Optional[float]]) -> dict:
    xs = [float(v) for v in values if v is not None]
    if not xs:
        return {"mean": None, "min": None, "max": None}
    return {"mean": float(np.mean(xs)), "min": min(xs), "max": max(xs)}


def _pool_dict(pool: stats.SeedPool, names: Sequence[str], extra: float = 0.0) -> dict:
    """The seed pool's summary for JSON."""
    out = {"cells": list(names), "seeds": pool.seeds.tolist(), "dof": json_number(pool.dof),
           "variance": json_number(pool.variance), "raw_variance": json_number(pool.raw_variance),
           "game_variance": json_number(pool.game_variance),
           "seed_variance": json_number(pool.seed_variance), "scale_variance": json_number(extra)}
    if pool.pooled is not None:
        out["cell_sd"] = {n: json_number(math.sqrt(v)) if np.isfinite(v) else None
                          for n, v in zip(names, pool.pooled.cell_variances)}
    return out


def _count(family: list) -> str:
    return f"{len(family)} comparison{'s' * (len(family) != 1)}"


def analyze(spec: Comparison, rows: Sequence[dict], *, floor: bool = True) -> dict:
    """JSON data: the spec, the fit (model, first-move term, games), the references'
    ratings, every rated checkpoint, per arm its points (mean over seeds with the pooled
    interval, distinct and played games, iterations and training seconds: mean, min, max
    over seeds), the gains, the differences at the last point, the two families with Holm
    and Bonferroni-adjusted intervals and what they can resolve, the seed pools and notes.
    `floor`: raise the pooled seed variance to the rating games' share (`stats`)."""
    names, meta = _players(spec, rows)
    index = {n: i for i, n in enumerate(names)}
    played, distinct = _game_counts(rows)
    notes: list[str] = []
    anchor = 0
    if not played.get(names[0]):
        anchor = next(i for i, n in enumerate(names) if played.get(n))
        notes.append(f"{names[0]} played no games: {names[anchor]} is rated 0 instead.")
    fit, games = stats.fit(rows, names, anchor=anchor)

    checkpoints = []
    for label, m in meta.items():
        checkpoints.append({**m, "label": label, **_player(
            fit, index[label], played.get(label, 0), distinct.get(label))})
    checkpoints.sort(key=lambda c: index[c["label"]])
    by_cell: dict[tuple[str, int], dict[int, dict]] = {}
    for c in checkpoints:
        by_cell.setdefault((c["arm"], c["point"]), {})[c["seed"]] = c

    seeds = list(spec.seeds)
    arm_names = [a.name for a in spec.arms]
    points = spec.budget.points
    seed_col = {s: k for k, s in enumerate(seeds)}
    arms: dict[str, list[dict]] = {a: [] for a in arm_names}
    pools: dict[int, dict] = {}
    pooled_at: dict[int, tuple[stats.SeedPool, list[str]]] = {}
    out_of_range = [c for c in checkpoints if c["status"] not in (rating.RATED, rating.ANCHOR)]

    def grid_covariance(grid: list[list[Optional[int]]]) -> np.ndarray:
        flat = [i for row in grid for i in row]
        cov = np.full((len(flat), len(flat)), np.nan)
        for x, i in enumerate(flat):
            for y, j in enumerate(flat):
                if i is not None and j is not None:
                    cov[x, y] = fit.covariance[i, j]
        return cov

    for point in range(1, points + 1):
        cells = []  # (arm, {seed: checkpoint}) with every checkpoint rated
        for arm in arm_names:
            got = by_cell.get((arm, point), {})
            got = {s: c for s, c in got.items() if s in seed_col}
            if got and all(c["elo"] is not None for c in got.values()):
                cells.append((arm, got))
        pool, scale = None, 0.0
        if cells:
            grid = [[index[got[s]["label"]] if s in got else None for s in seeds]
                    for _, got in cells]
            values = np.array([[got[s]["elo"] if s in got else np.nan for s in seeds]
                               for _, got in cells])
            pool = stats.pool(values, grid_covariance(grid), floor=floor)
            flat = [i for row in grid for i in row if i is not None]
            if len(flat) > 1:  # the references' uncertainty, shared by every checkpoint
                sub = fit.covariance[np.ix_(flat, flat)]
                scale = float((sub.sum() - np.trace(sub)) / (len(flat) * (len(flat) - 1)))
                scale = max(scale, 0.0)
            pools[point] = _pool_dict(pool, [a for a, _ in cells], scale)
            pooled_at[point] = (pool, [a for a, _ in cells])
        pooled_arms = [a for a, _ in cells]
        for arm in arm_names:
            got = {s: c for s, c in by_cell.get((arm, point), {}).items() if s in seed_col}
            if not got:
                continue
            ordered = [got[s] for s in seeds if s in got]
            entry = {"point": point, "seeds": len(ordered),
                     "ratings": [c["elo"] for c in ordered],
                     "iteration": _spread([c["iteration"] for c in ordered])["mean"],
                     "iterations": _spread([c["iteration"] for c in ordered]),
                     "seconds": _spread([c["seconds"] for c in ordered])["mean"],
                     "training_seconds": _spread([c["seconds"] for c in ordered]),
                     "games": sum(c["games"] for c in ordered),
                     "distinct_games": (None if any(c["distinct_games"] is None
                                                    for c in ordered)
                                        else sum(c["distinct_games"] for c in ordered))}
            if arm in pooled_arms:
                k = pooled_arms.index(arm)
                w = np.zeros(len(pooled_arms))
                w[k] = 1.0
                cell = pool.contrast(w, extra_variance=scale)
                entry.update(stats.to_dict(cell), in_range=True,
                             se_seeds=json_number(math.sqrt(pool.variance / len(ordered)))
                             if pool.pooled is not None else None,
                             se_scale=json_number(math.sqrt(scale)) if pool.pooled is not None
                             else None)
            else:
                out = [c for c in ordered if c["elo"] is None]
                above = [c["bound"] for c in out if c["status"] == rating.ABOVE]
                below = [c["bound"] for c in out if c["status"] == rating.BELOW]
                entry.update(mean=None, se=None, lower=None, upper=None, margin=None,
                             in_range=False, out_of_range=len(out))
                if len(above) == len(ordered) and None not in above:
                    entry["lower"] = min(above)  # every seed above its bound
                elif len(below) == len(ordered) and None not in below:
                    entry["upper"] = max(below)
            arms[arm].append(entry)

    # The differences between arms at the last point (unpaired, the last point's pool).
    differences: dict[str, dict[str, dict]] = {}
    diff_family, diff_intervals = [], []
    last = pooled_at.get(points)
    if last is not None:
        pool, cells = last
        for b in range(len(cells)):
            differences[cells[b]] = {}
            for a in range(len(cells)):
                if a != b:
                    differences[cells[b]][cells[a]] = stats.to_dict(pool.difference(a, b))
        for i in range(len(cells)):
            for j in range(i + 1, len(cells)):
                diff_intervals.append(pool.difference(i, j))
                diff_family.append({"label": f"{cells[j]} − {cells[i]}", "a": cells[i],
                                    "b": cells[j]})

    # Gains: per seed, the last point's rating minus the first's, pooled across arms.
    gains: dict[str, dict] = {}
    gain_family, gain_intervals, gain_pool = [], [], None
    if points > 1:
        gain_cells, values, lasts, firsts = [], [], [], []
        for arm in arm_names:
            first = {s: c for s, c in by_cell.get((arm, 1), {}).items() if s in seed_col}
            final = {s: c for s, c in by_cell.get((arm, points), {}).items() if s in seed_col}
            both = [s for s in seeds if s in first and s in final]
            if not both or any(first[s]["elo"] is None or final[s]["elo"] is None
                               for s in both):
                if both:
                    gains[arm] = {"mean": None, "in_range": False}
                continue
            gain_cells.append(arm)
            values.append([final[s]["elo"] - first[s]["elo"] if s in both else np.nan
                           for s in seeds])
            lasts.append([index[final[s]["label"]] if s in both else None for s in seeds])
            firsts.append([index[first[s]["label"]] if s in both else None for s in seeds])
        if gain_cells:
            lf = [i for row in lasts for i in row]
            ff = [i for row in firsts for i in row]
            n = len(lf)
            cov = np.full((n, n), np.nan)
            c = fit.covariance
            for x in range(n):
                for y in range(n):
                    if lf[x] is not None and lf[y] is not None:
                        cov[x, y] = (c[lf[x], lf[y]] - c[lf[x], ff[y]] - c[ff[x], lf[y]]
                                     + c[ff[x], ff[y]])
            gain_pool = stats.pool(np.array(values), cov, floor=floor)
            for k, arm in enumerate(gain_cells):
                w = np.zeros(len(gain_cells))
                w[k] = 1.0
                interval = gain_pool.contrast(w)
                gain_intervals.append(interval)
                gain_family.append({"label": arm, "a": arm, "b": arm})
                gains[arm] = {**stats.to_dict(interval), "in_range": True,
                              "per_seed": [json_number(v) for v in values[k]]}

    families = []
    seeds_per_arm = [len(seeds)] * len(arm_names)
    for name, kind, family, intervals, pool in (
            (f"the differences between arms at the last point ({_count(diff_family)})",
             "differences", diff_family, diff_intervals, last[0] if last else None),
            (f"the arms' gains, last point − first ({_count(gain_family)})", "gains",
             gain_family, gain_intervals, gain_pool)):
        if not intervals:
            continue
        adjusted = stats.family(intervals)
        families.append({"name": name, "kind": kind,
                         "comparisons": [{**f, **a} for f, a in zip(family, adjusted)],
                         "resolution": stats.resolution(intervals, pool, seeds_per_arm)})
    for f in families:  # the adjusted values next to the per-comparison ones
        for comp in f["comparisons"]:
            target = (differences.get(comp["b"], {}).get(comp["a"]) if f["kind"] ==
                      "differences" else gains.get(comp["a"]))
            if target is not None:
                target.update(holm=comp.get("holm"), simultaneous=comp.get("simultaneous"))

    # Notes on what the fit could not do.
    if games.uncoloured_rows:
        notes.append(
            f"{games.uncoloured_rows} of {games.rows} match rows have no per-colour record "
            f"(written by an older version): their games were split evenly between colours"
            + (", so the first-move term could not be fitted." if not fit.first_move_fitted
               else ", which pulls the first-move term towards 0; rerun those matches "
                    "for a full fit."))
    elif not fit.first_move_fitted:
        notes.append("The first-move term could not be fitted (the first mover won every "
                     "game where colours could be compared): it is fixed at 0.")
    if games.unknown_distinct_rows:
        notes.append(f"{games.unknown_distinct_rows} of {games.rows} match rows do not "
                     f"count their distinct games: their games count as independent.")
    if fit.draws != "davidson" and np.any(games.score == 0.5):
        notes.append("Davidson's draw model has no finite maximum on these games: draws "
                     "count as half points.")
    if not fit.converged:
        notes.append(f"The rating fit did not converge in {fit.iterations} Newton steps: "
                     f"treat its numbers with care.")
    if out_of_range:
        notes.append(
            f"{len(out_of_range)} checkpoint(s) won or lost every game against everything "
            f"they met: out of the ladder's range, shown as one-sided bounds and left out "
            f"of every mean and interval (rate them against stronger or weaker "
            f"references).")
    if any(p.get("dof") is None for p in pools.values()):
        notes.append("One seed per arm: there is no seed-to-seed variance to measure, so "
                     "the intervals count only the rating games' noise; a claim about "
                     "arms needs at least 2 seeds each.")

    return {"spec": spec.to_dict(),
            "fit": {"model": fit.draws, "first_move": json_number(fit.first_move),
                    "first_move_se": json_number(fit.first_move_se),
                    "first_move_fitted": fit.first_move_fitted,
                    "draw_param": json_number(fit.draw_param),
                    "games": sum(stats.row_games(r) for r in rows),
                    "weighted_games": float(games.weight.sum()),
                    "separated_games": fit.separated_games, "converged": fit.converged,
                    "anchor": names[anchor]},
            "references": {n: _player(fit, i, played.get(n, 0), distinct.get(n))
                           for i, n in enumerate(names) if n not in meta},
            "checkpoints": checkpoints, "arms": arms, "gains": gains,
            "differences": differences, "families": families,
            "seeds": {str(p): v for p, v in pools.items()},
            "gain_seeds": (_pool_dict(gain_pool, [f["label"] for f in gain_family])
                           if gain_pool is not None else None),
            "out_of_range": [c["label"] for c in out_of_range], "notes": notes}


# ----------------------------------------------------------------------------- markdown

def _signed(x: Optional[float]) -> str:
    return "?" if x is None else f"{x:+.0f}"


def _interval(p: dict, simultaneous: bool = False) -> str:
    if p is None or p.get("mean") is None:
        return "—"
    lo, hi = (p["simultaneous"] if simultaneous else (p["lower"], p["upper"]))
    return f"{p['mean']:+.0f} [{_signed(lo)}, {_signed(hi)}]"


def _cell(p: dict, seeds: int) -> str:
    if p.get("in_range", True) and p.get("mean") is not None:
        text = _interval(p)
        return text + (f" (n={p['seeds']})" if p["seeds"] < seeds else "")
    if p.get("lower") is not None:
        return f"> {p['lower']:+.0f} (out of range)"
    if p.get("upper") is not None:
        return f"< {p['upper']:+.0f} (out of range)"
    return f"out of range ({p.get('out_of_range', '?')}/{p['seeds']} seeds)"


def _player_text(p: dict) -> str:
    if p["elo"] is not None:
        return _interval({"mean": p["elo"], "lower": p["lower"], "upper": p["upper"]})
    if p["status"] == rating.ABOVE:
        return f"> {_signed(p['bound'])}" if p["bound"] is not None else "above all (no bound)"
    if p["status"] == rating.BELOW:
        return f"< {_signed(p['bound'])}" if p["bound"] is not None else "below all (no bound)"
    return p["status"]


def _resolution_text(family: dict) -> str:
    r = family["resolution"]
    lo, hi = r["detectable"]
    slo, shi = r["detectable_simultaneous"]
    span = f"{lo:.0f}" if round(lo) == round(hi) else f"{lo:.0f}–{hi:.0f}"
    sspan = f"{slo:.0f}" if round(slo) == round(shi) else f"{slo:.0f}–{shi:.0f}"
    text = (f"- {family['name'][0].upper()}{family['name'][1:]}: the smallest difference "
            f"a 95% interval would detect is ±{span} Elo (±{sspan} with the simultaneous "
            f"intervals). ")
    seeds = sorted(set(r["seeds_to_halve"]))
    text += (f"{' or '.join(map(str, seeds))} seeds per arm (4×) would about halve it")
    if r.get("seed_variance") is None:
        text += "; with one seed the intervals count only the games, and 4× the games would."
        return text
    g, s = r["game_variance"], r["seed_variance"]
    share = g / (g + s) if g + s > 0 else 1.0
    text += (f"; the {'seed-to-seed spread' if r['dominant'] == 'seeds' else 'rating games'}"
             f" dominate{'s' if r['dominant'] == 'seeds' else ''} the variance "
             f"(games {share:.0%}, seeds {1 - share:.0%})")
    m = r.get("games_to_halve")
    text += (f", and {m:.1f}× the games would halve it too." if m is not None else
             ", and no number of games would halve it (the seeds' spread alone is more "
             "than a quarter of the variance).")
    return text


def markdown(analysis: dict) -> str:
    """The report: the fit; notes (what the run cannot resolve, old rows, checkpoints out of
    range); the arm × point table of mean Elo [95% interval] with each arm's gain; the
    distinct games behind each cell; iterations and training seconds; the differences at
    the last point; each family with Holm p-values and simultaneous intervals; what the
    design can resolve; the seed pools; out-of-range checkpoints; references; arms."""
    spec = analysis["spec"]
    budget = spec["budget"]
    points = budget["points"]
    n_seeds = len(spec["seeds"])
    fit = analysis["fit"]
    unit = "iterations" if budget["kind"] == "iterations" else "training seconds"
    model = ("Davidson's draw model" if fit["model"] == "davidson"
             else "draws as half points")
    first = (f"a first-move term (moving first is worth {fit['first_move']:+.0f} ± "
             f"{1.96 * fit['first_move_se']:.0f} Elo)" if fit["first_move_fitted"]
             else "no first-move term (see the notes)")
    head = (f"Budget: {budget['amount']:g} {unit} per run, rated at {points} points; "
            f"{n_seeds} seed(s) per arm; base preset {spec['preset']}"
            + (f" with {' '.join(spec['base'])}" if spec["base"] else "")
            + "".join(f"; arm {a['name']} from preset {a['preset']}" for a in spec["arms"]
                      if a.get("preset")) + ". "
            f"Each checkpoint played `{spec['eval_agent']}` against "
            f"{', '.join(spec['references'])}, {spec['games']} games each (every opening, both "
            f"colours). One maximum-likelihood fit over all {fit['games']} games "
            f"({model}, {first}; games that repeat weighted by distinct / played, "
            f"{fit['weighted_games']:.0f} games' worth), {fit['anchor']} = 0. Cells: mean "
            f"Elo over seeds [95% interval, the seeds' variance pooled across arms at each "
            f"point].")
    if budget["kind"] == "seconds":
        head += (" A run stops before an iteration would cross a point's budget (from its "
                 "last iteration's time), so its actual training seconds, below, fall short "
                 "of the point by up to about one iteration.")
    columns = [f"{100 * k // points}%" for k in range(1, points + 1)]
    families = analysis["families"]
    warnings = []
    diffs = [f for f in families if f["kind"] == "differences"]
    if diffs and diffs[0]["resolution"]["unresolved"]:
        lo = diffs[0]["resolution"]["detectable"][0]
        warnings.append(
            f"**This run cannot separate the arms**: no difference between them smaller "
            f"than ±{lo:.0f} Elo would show in its intervals (more than "
            f"{stats.UNRESOLVED_ELO:.0f}). Nothing about which arm is better can be read "
            f"from it; see \"What this design can resolve\" for the seeds it would take.")
    elif not diffs and len(spec["arms"]) > 1:
        warnings.append("**The arms cannot be compared at the last point**: too few of "
                        "their checkpoints there have a rating (see the notes).")
    gains_f = [f for f in families if f["kind"] == "gains"]
    if gains_f and gains_f[0]["resolution"]["unresolved"]:
        warnings.append(f"**No arm's gain can be resolved**: every gain's interval is "
                        f"wider than ±{stats.UNRESOLVED_ELO:.0f} Elo.")
    notes = "\n\n".join(warnings + (["\n".join(f"- {n}" for n in analysis["notes"])]
                                     if analysis["notes"] else []))

    elo_rows, distinct_rows, cost_rows = [], [], []
    for arm in spec["arms"]:
        curve = {p["point"]: p for p in analysis["arms"].get(arm["name"], [])}
        gain = analysis["gains"].get(arm["name"])
        elo_rows.append([arm["name"]] + [_cell(curve[k], n_seeds) if k in curve else "—"
                                         for k in range(1, points + 1)]
                        + ["—" if gain is None else _interval(gain) if gain["in_range"]
                           else "out of range"])
        distinct_rows.append([arm["name"]] + [
            (f"{curve[k]['distinct_games']} / {curve[k]['games']}"
             if curve[k]["distinct_games"] is not None else f"? / {curve[k]['games']}")
            if k in curve else "—" for k in range(1, points + 1)])
        cost = []
        for k in range(1, points + 1):
            if k not in curve:
                cost.append("—")
                continue
            it, sec = curve[k]["iterations"], curve[k]["training_seconds"]
            text = f"{it['mean']:.0f} it" if it["mean"] is not None else "? it"
            if it["mean"] is not None and it["min"] != it["max"]:
                text += f" ({it['min']:.0f}–{it['max']:.0f})"
            if sec["mean"] is not None:
                text += f", {sec['mean']:.3g} s ({sec['min']:.3g}–{sec['max']:.3g})"
            cost.append(text)
        cost_rows.append([arm["name"]] + cost)
    parts = [head]
    if notes:
        parts.append(notes)
    parts += [markdown_table(["arm"] + columns + [f"gain {columns[0]} → {columns[-1]}"],
                             elo_rows),
              "Distinct games / games played behind each cell (all its seeds and opponents; "
              "a match's repeated games are weighted down in the fit):",
              markdown_table(["arm"] + columns, distinct_rows),
              "Training iterations and seconds (compilation not counted) at each point: "
              "mean over seeds (range):",
              markdown_table(["arm"] + columns, cost_rows)]
    final = list(analysis["differences"])
    if len(final) > 1:
        parts += [f"Elo differences at {columns[-1]}, row arm − column arm, unpaired (seeds "
                  f"of two arms share only the initial network) [95% interval]:",
                  markdown_table(["row − column"] + final, [
                      [b] + ["—" if a == b else _interval(analysis["differences"][b][a])
                             for a in final] for b in final])]
    for f in families:
        rows = [[c["label"], _interval(c), f"{c['p_value']:.3f}" if c["p_value"] is not None
                 else "?", f"{c['holm']:.3f}" if c.get("holm") is not None else "?",
                 _interval(c, simultaneous=True) if c.get("simultaneous") else "—"]
                for c in f["comparisons"]]
        parts += [f"The family of {f['name']}: each with its own 95% interval and p-value, "
                  f"Holm's adjusted p-value (≤ 0.05: the family's error rate is at most 5%) "
                  f"and the Bonferroni simultaneous 95% interval (all of them cover together):",
                  markdown_table(["comparison", "estimate [95%]", "p", "Holm p",
                                  "simultaneous [95%]"], rows)]
    if families:
        parts += ["What this design can resolve:\n"
                  + "\n".join(_resolution_text(f) for f in families)]
    seed_rows = []
    for p, s in analysis["seeds"].items():
        seed_rows.append(_seed_row(columns[int(p) - 1], s))
    if analysis.get("gain_seeds"):
        seed_rows.append(_seed_row("gains", analysis["gain_seeds"]))
    if seed_rows:
        parts += ["The seeds' variance, pooled across arms (one variance per point: it assumes "
                  "the seed-to-seed spread does not depend on the arm; each arm's own spread "
                  "is in results.json), its degrees of freedom, and the part the rating games "
                  "alone would give (the floor):",
                  markdown_table(["point", "arms", "dof", "sd per seed", "raw sd",
                                  "games' sd", "seeds' sd"], seed_rows)]
    out = [c for c in analysis["checkpoints"] if c["elo"] is None]
    if out:
        parts += ["Checkpoints out of the ladder's range (won or lost every game they played "
                  "against rated players; a one-sided 97.5% bound):",
                  markdown_table(["checkpoint", "Elo", "games"], [
                      [c["label"], _player_text(c), str(c["games"])] for c in out])]
    parts.append(markdown_table(["reference", "Elo [95%]", "games"], [
        [r, _player_text(p), str(p["games"])] for r, p in analysis["references"].items()]))
    parts.append(markdown_table(["arm", "overrides"], [
        [a["name"], " ".join(f"`{o}`" for o in a["overrides"]) or "(the base)"]
        for a in spec["arms"]]))
    if "ladder" in analysis:
        parts += ["## Reference ladder", ladder_markdown(analysis["ladder"])]
    return "\n\n".join(parts)


def _seed_row(name: str, s: dict) -> list[str]:
    def sd(v):
        return "—" if v is None else f"{math.sqrt(v):.0f}"
    return [name, ", ".join(s["cells"]), "—" if s["dof"] is None else f"{s['dof']:.0f}",
            sd(s["variance"]), sd(s["raw_variance"]), sd(s["game_variance"]),
            sd(s["seed_variance"])]


def plot(analysis: dict, path: str) -> None:
    """A PNG: Elo against training iterations and against training seconds, one line per
    arm (its mean over seeds) with its 95% band, the references as dotted lines. Cells out
    of the ladder's range are left out of the lines."""
    from matplotlib.figure import Figure  # not pyplot: no global backend or figure state

    fig = Figure(figsize=(12, 4.5))
    axes = fig.subplots(1, 2, sharey=True)
    for (axis, x, label) in ((axes[0], "iteration", "training iterations"),
                             (axes[1], "seconds", "training seconds")):
        for name, curve in analysis["arms"].items():
            curve = [p for p in curve if p.get("mean") is not None and p.get(x) is not None]
            if not curve:
                continue
            xs = [p[x] for p in curve]
            line, = axis.plot(xs, [p["mean"] for p in curve], marker="o", label=name)
            axis.fill_between(xs, [p["lower"] for p in curve], [p["upper"] for p in curve],
                              color=line.get_color(), alpha=0.15)
        for ref, p in analysis["references"].items():
            if p["elo"] is None:
                continue
            axis.axhline(p["elo"], color="grey", linestyle=":", linewidth=1)
            axis.annotate(ref, (1.0, p["elo"]), xycoords=("axes fraction", "data"),
                          fontsize=7, color="grey", ha="right", va="bottom")
        axis.set_xlabel(label)
        axis.grid(alpha=0.3)
    axes[0].set_ylabel(f"Elo ({analysis['fit']['anchor']} = 0)")
    if any(p.get("mean") is not None for c in analysis["arms"].values() for p in c):
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
