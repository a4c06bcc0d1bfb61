"""Two of our engines through one outside engine: the paired difference of two ladders.

    python experiments/ladder_diff.py A.json B.json [--out diff.md]
    python experiments/ladder_diff.py A1.json,A2.json B1.json,B2.json

A.json and B.json are `strength.py --ladder ... --json` records of two of our engines (the
`--ours` commands) against the same outside engine, on the same openings; a side given as
several files (comma-separated) is their ladders one after the other, their openings
concatenated (a ladder played in parts). At each rung
both met the same engine at the same budget from the same openings with both colours, so
opening i gives each a pair score (0, ½, 1, 1½ or 2 points of 2 games) and

    d_i = A's pair points - B's pair points,        i = 1 .. n openings,

a paired difference: what the opening does to both (a side that wins it, a quick loss)
cancels. The report per rung: both scores, the counts of openings where A did better /
the same / worse, and the mean of d_i in points per game (d_i / 2) with its Student t
interval on n - 1 degrees of freedom (`gomoku_jax.eval.seeds.per_cell`). The openings are
the units, so the interval holds for openings drawn like these, against this engine at
this budget; it assumes the pairs are independent and their mean near normal (n of 20 or
more; the test checks the coverage on simulated ladders with a known difference). An
interval that includes 0 is "no difference detected". Where every d_i is equal there is
no spread to estimate and no interval.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Optional, Sequence

import numpy as np

from gomoku_jax.eval import seeds
from gomoku_jax.markdown import table as markdown_table
from gomoku_jax.markdown import write_report


def concatenate(ladders: Sequence[dict]) -> dict:
    """Ladders played in parts as one: the openings one after the other, each rung's games
    with their opening indices moved along. ValueError for parts on other boards, or
    whose rungs differ."""
    first = ladders[0]
    out = {**first, "openings": [], "rungs": [{**r, "games": []} for r in first["rungs"]]}
    for part in ladders:
        if part.get("config") != first.get("config"):
            raise ValueError("the parts of a ladder must be on one board and rule")
        if [r["nodes"] for r in part["rungs"]] != [r["nodes"] for r in first["rungs"]]:
            raise ValueError("the parts of a ladder must have the same rungs")
        shift = len(out["openings"])
        out["openings"] += part["openings"]
        for whole, rung in zip(out["rungs"], part["rungs"]):
            whole["games"] += [{**g, "opening": g["opening"] + shift}
                               for g in rung.get("games") or []]
    return out


def read_ladder(paths: str) -> dict:
    """The ladder in `paths`: one `strength.py --ladder --json` record, or several,
    comma-separated, concatenated."""
    parts = []
    for path in paths.split(","):
        with open(path) as f:
            ladder = json.load(f)
        if ladder.get("mode") != "ladder":
            raise ValueError(f"{path} is not a ladder record (strength.py --ladder --json)")
        parts.append(ladder)
    return concatenate(parts)


def pair_points(rung: dict) -> list[float]:
    """Our points per opening of one ladder rung (games 2i and 2i + 1 are a pair, as
    `strength.py` plays them)."""
    games = rung.get("games") or []
    if len(games) % 2:
        raise ValueError(f"rung {rung['nodes']}: an odd number of games ({len(games)})")
    return [games[i]["result"] + games[i + 1]["result"] for i in range(0, len(games), 2)]


def opening_keys(rung: dict) -> list[int]:
    """The opening index of each pair of a rung."""
    games = rung.get("games") or []
    return [games[i]["opening"] for i in range(0, len(games), 2)]


def difference(a: Sequence[float], b: Sequence[float], confidence: float = 0.95) -> dict:
    """Paired difference of pair points a_i - b_i (per pair, points of 2): mean per game
    (d / 2) with its t interval (None where the d_i do not vary), and the sign counts."""
    d = np.asarray(a, np.float64) - np.asarray(b, np.float64)
    if d.shape != (len(a),) or len(a) != len(b) or len(d) < 2:
        raise ValueError(f"need two equal lists of at least 2 pair scores, got {len(a)} "
                         f"and {len(b)}")
    out = {"pairs": len(d), "mean": float(d.mean() / 2), "better": int((d > 0).sum()),
           "same": int((d == 0).sum()), "worse": int((d < 0).sum()),
           "lower": None, "upper": None, "confidence": confidence}
    if np.ptp(d) > 0:
        iv = seeds.per_cell(d[None, :] / 2, confidence)
        out.update(lower=float(iv.lower[0]), upper=float(iv.upper[0]),
                   p_value=float(iv.p_value[0]))
    return out


def compare(a: dict, b: dict, confidence: float = 0.95) -> list[dict]:
    """Per rung both ladders played: the rung, A's and B's scores per game and
    `difference`. ValueError for ladders on other openings or boards."""
    if a.get("config") != b.get("config") or a.get("openings") != b.get("openings"):
        raise ValueError("the two ladders must be on the same board, rule and openings")
    rungs_b = {r["nodes"]: r for r in b["rungs"] if r.get("games")}
    rows = []
    for ra in a["rungs"]:
        rb = rungs_b.get(ra["nodes"])
        if not ra.get("games") or rb is None:
            continue
        if opening_keys(ra) != opening_keys(rb):
            raise ValueError(f"rung {ra['nodes']}: the two ladders played other openings")
        pa, pb = pair_points(ra), pair_points(rb)
        rows.append({"nodes": ra["nodes"], "score_a": sum(pa) / (2 * len(pa)),
                     "score_b": sum(pb) / (2 * len(pb)), **difference(pa, pb, confidence)})
    if not rows:
        raise ValueError("the two ladders share no rung with games")
    return rows


def report(rows: Sequence[dict], a: dict, b: dict) -> str:
    def pct(x: Optional[float]) -> str:
        return "—" if x is None else f"{100 * x:+.1f}"

    level = f"{100 * rows[0]['confidence']:g}%"
    body = [[f"{r['nodes']:,}", f"{100 * r['score_a']:.1f}%", f"{100 * r['score_b']:.1f}%",
             f"{r['better']}/{r['same']}/{r['worse']}", pct(r["mean"]),
             "—" if r["lower"] is None else f"[{pct(r['lower'])}, {pct(r['upper'])}]"]
            for r in rows]
    return "\n".join([
        f"A: `{' '.join(a['ours']['argv'])}`", "",
        f"B: `{' '.join(b['ours']['argv'])}`", "",
        f"against `{a['engine']}`, {rows[0]['pairs']} openings with both colours", "",
        markdown_table(["rung (nodes)", "A's score", "B's score",
                        "openings A better / same / worse",
                        "A − B, points per game (%)", f"{level} t interval"], body)])


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", metavar="A.json", help="A's ladder (FILE or FILE,FILE,...)")
    parser.add_argument("b", metavar="B.json", help="B's ladder (FILE or FILE,FILE,...)")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--out", metavar="FILE", help="also write the markdown here")
    parser.add_argument("--json", metavar="FILE", help="write the rows as JSON")
    args = parser.parse_args(argv)
    try:
        if not 0 < args.confidence < 1:
            raise ValueError(f"--confidence must be in (0, 1), got {args.confidence}")
        ladders = [read_ladder(args.a), read_ladder(args.b)]
        rows = compare(*ladders, confidence=args.confidence)
    except (ValueError, OSError, KeyError) as e:
        raise SystemExit(f"error: {e}")
    text = report(rows, *ladders)
    print(text)
    write_report(text, args.out, args.json, {"a": args.a, "b": args.b, "rungs": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
