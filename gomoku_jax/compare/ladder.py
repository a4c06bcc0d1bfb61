"""The reference ladder: references whose neighbours are at most `gap` Elo apart over the
range the checkpoints reach, calibrated once per comparison and cached in `ladder.json`.

A rating against references says something only where the references are close: a
checkpoint that wins every game against one reference and loses every game against the
next is placed by the model, not by games, anywhere in the hole between them. So instead of
a fixed pool `compare --ladder` (the default unless `--references` is given) takes an
ordered list of *candidates* (the game's `GameSpec.ladder`, or `--references` with
`--ladder`; weakest first as far as known, the first rated 0) and builds a chain of them.

Calibration. The candidates are calibrated lazily, from the bottom: first the lowest
`INITIAL` ones, then one at a time as checkpoints climb past the top. Each candidate added
plays the current strongest calibrated one; then every pair of neighbours in the fitted
order that has not met plays (a wrong guess of the order is repaired by the games), until
all fitted neighbours have met. A match is `games` games (the comparison's), every opening
with both colours (`eval.arena.run_match`), and the fit is `eval.elo.fit_games` on the
per-colour records (a first-move term, no prior). Candidates that the games separate (a
neighbour won every game) are not rated by one fit; `fit_candidates` places them segment
by segment: each strongly connected group is fitted on its own and put at the one-sided
95% bound of its sweep against the group below (a conservative position, never an
estimate), so a gap across a sweep is always reported as a hole.

Selection (`select`, a pure function of the calibrated ratings): from the weakest
candidate up, the next rung is the strongest candidate at most `gap` Elo above the current
one within its segment (a middle candidate is taken whenever the next one is too far);
where none is, the next candidate up becomes the rung and the gap is reported as one the
candidates cannot close (with its size, or its bound across a sweep).

Rating a checkpoint (`next_rung`, a pure function of its scores so far). It does not play
every rung: it starts at the highest rung its previous point scored at least `HIGH` (90%)
against (the bottom at the first point), climbs until it scores at most `LOW` (10%) against
a rung or reaches the top, and steps down from the start until it scores at least 90% or
reaches the bottom; every rung in between is played. It must then score strictly between
10% and 90% against at least one rung (`place`); when it is above the top (or below the
bottom) the ladder is extended from the candidates left, and it plays the new rungs; when
none are left, or it sits in a hole it jumped across, it is listed as out of range, with
the reason, in `ladder.json` and the report.

The last point's checkpoints also play each other (a round robin, `runner.run`), so their
differences rest on direct games as well as on the ladder.

`ladder.json` (rewritten after every calibration match and every checkpoint rated) holds
the game, the candidates, the gap, the games per match, the calibrated candidates, every
calibration match (per-colour records), the fitted ratings, the chosen rungs with their
gaps, and each rated checkpoint's rungs, scores and placement; a rerun reuses all of it
(nothing is played twice), and a kill loses at most the match in flight.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
import zlib
from typing import Any, Callable, Mapping, Optional, Sequence

import jax
import numpy as np

from gomoku_jax.eval import elo

LADDER_FILE = "ladder.json"
LOW, HIGH = 0.1, 0.9  # a checkpoint is placed by a rung it scores strictly between
DEFAULT_GAP = 250.0
INITIAL = 3  # candidates calibrated before any checkpoint is rated
COVERED, ABOVE, BELOW, HOLE = "covered", "above", "below", "hole"


# --------------------------------------------------------------------------- records

@dataclasses.dataclass(frozen=True)
class Pairing:
    """A calibration match: `a`'s wins, draws and losses against `b` as the first mover
    (`a_first`) and as the second (`a_second`), and how many of its games differed."""

    a: str
    b: str
    a_first: tuple[int, int, int]
    a_second: tuple[int, int, int]
    distinct: Optional[int] = None

    @classmethod
    def from_match(cls, m: Any) -> "Pairing":
        """From an `eval.arena.MatchResult`."""
        f, s = m.as_first, m.as_second
        return cls(m.agent_a, m.agent_b, (f.wins, f.draws, f.losses),
                   (s.wins, s.draws, s.losses), m.distinct_games)

    @property
    def score(self) -> float:
        """`a`'s points per game."""
        w = self.a_first[0] + self.a_second[0]
        d = self.a_first[1] + self.a_second[1]
        return (w + 0.5 * d) / self.games

    @property
    def games(self) -> int:
        return sum(self.a_first) + sum(self.a_second)

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "a_first": list(self.a_first),
                "a_second": list(self.a_second), "distinct": self.distinct}

    @classmethod
    def from_dict(cls, d: Mapping) -> "Pairing":
        return cls(d["a"], d["b"], tuple(d["a_first"]), tuple(d["a_second"]),
                   d.get("distinct"))


def game_records(names: Sequence[str], pairings: Sequence[Pairing]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, second, score): one record per game for `elo.fit_games`, players indexed as
    in `names` (pairings of others are left out)."""
    index = {n: i for i, n in enumerate(names)}
    first, second, score = [], [], []
    for p in pairings:
        if p.a not in index or p.b not in index:
            continue
        a, b = index[p.a], index[p.b]
        for (w, d, lo), (f, s) in ((p.a_first, (a, b)), (p.a_second, (b, a))):
            a_points = (1.0, 0.5, 0.0) if f == a else (0.0, 0.5, 1.0)  # the first mover's
            for count, pts in zip((w, d, lo), a_points):
                first += [f] * count
                second += [s] * count
                score += [pts] * count
    return (np.asarray(first, np.int64), np.asarray(second, np.int64),
            np.asarray(score, np.float64))


# --------------------------------------------------------------------------- the fit

@dataclasses.dataclass(frozen=True)
class Rated:
    """A calibrated candidate: its Elo (`elo`, finite), its 95% interval from its
    segment's fit (`lower`, `upper`; the segment's own anchor has none: 0 width), and its
    `segment` (0: the first candidate's; k > 0: placed at a bound above or below segment
    k - 1's players, see the module doc)."""

    name: str
    elo: float
    lower: float
    upper: float
    segment: int

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def fit_candidates(names: Sequence[str], pairings: Sequence[Pairing]) -> dict[str, Rated]:
    """{name: Rated} for every candidate of `names` that the games place (`names[0]` at 0;
    see the module doc for separated groups). Candidates without games are left out."""
    names = list(names)
    first, second, score = game_records(names, pairings)
    played = set(first.tolist()) | set(second.tolist())
    if 0 not in played:
        return {names[0]: Rated(names[0], 0.0, 0.0, 0.0, 0)} if names else {}
    placed: dict[int, Rated] = {}
    anchor, offset, segment = 0, 0.0, 0
    while anchor is not None:
        rest = [i for i in sorted(played) if i not in placed]
        # The segment: the anchor's group, fitted on the games among the players not placed.
        keep = np.isin(first, rest) & np.isin(second, rest)
        if not np.any(keep & ((first == anchor) | (second == anchor))):
            placed[anchor] = Rated(names[anchor], offset, offset, offset, segment)
        else:
            fit = elo.fit_games(first[keep], second[keep], score[keep],
                                num_players=len(names), anchor=anchor)
            for i in rest:
                if fit.rated[i]:
                    r = float(fit.ratings[i]) + offset
                    half = 0.0 if i == anchor else float(fit.stderr[i]) * elo.Z95
                    placed[i] = Rated(names[i], r, r - half, r + half, segment)
        # The next segment's anchor: the first player not placed (in `names` order) that a
        # placed one swept or was swept by, at its pair's one-sided bound (`fit_games` on
        # the pair alone: Clopper-Pearson), the tightest over its placed opponents.
        anchor = None
        for j in (i for i in sorted(played) if i not in placed):
            above, below = [], []
            for i, r in placed.items():
                pair = ((first == i) & (second == j)) | ((first == j) & (second == i))
                if not pair.any():
                    continue
                f2 = np.where(first[pair] == i, 0, 1)
                pf = elo.fit_games(f2, 1 - f2, score[pair], num_players=2, anchor=0)
                if pf.status[1] == "above" and math.isfinite(pf.lower[1]):
                    above.append(r.elo + float(pf.lower[1]))
                elif pf.status[1] == "below" and math.isfinite(pf.upper[1]):
                    below.append(r.elo + float(pf.upper[1]))
                elif pf.rated[1]:
                    above.append(r.elo + float(pf.ratings[1]))
            if above or below:
                anchor, offset = j, (max(above) if above else min(below))
                segment += 1
                break
    return {r.name: r for r in sorted(placed.values(), key=lambda r: (r.elo, r.segment))}


# --------------------------------------------------------------------------- selection

@dataclasses.dataclass(frozen=True)
class Gap:
    """Two neighbouring rungs `low` < `high` and the Elo between them; `closed`: at most
    the ladder's gap; `separated`: across a sweep (then `elo` is a lower bound)."""

    low: str
    high: str
    elo: float
    closed: bool
    separated: bool = False

    def describe(self) -> str:
        size = f"≥ {self.elo:.0f}" if self.separated else f"{self.elo:.0f}"
        why = (" (separated: one side won every game)" if self.separated else "")
        return f"{self.low} → {self.high}: {size} Elo{why}"

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Chain:
    """The rungs, weakest first, and the gap above each but the last."""

    rungs: tuple[str, ...]
    gaps: tuple[Gap, ...]

    @property
    def holes(self) -> tuple[Gap, ...]:
        """The gaps wider than the ladder's: the candidates cannot close them."""
        return tuple(g for g in self.gaps if not g.closed)

    def to_dict(self) -> dict:
        return {"rungs": list(self.rungs), "gaps": [g.to_dict() for g in self.gaps]}


def select(rated: Mapping[str, Rated] | Sequence[Rated], gap: float = DEFAULT_GAP) -> Chain:
    """The chain of the module doc over the calibrated candidates `rated`: from the
    weakest, the strongest candidate at most `gap` above (same segment) is the next rung;
    none: the next candidate up, a hole."""
    points = sorted(rated.values() if isinstance(rated, Mapping) else rated,
                    key=lambda r: (r.elo, r.segment))
    if not points:
        return Chain((), ())
    rungs, gaps = [points[0]], []
    i = 0
    while i < len(points) - 1:
        cur = points[i]
        reach = [j for j in range(i + 1, len(points))
                 if points[j].segment == cur.segment and points[j].elo - cur.elo <= gap]
        j = reach[-1] if reach else i + 1
        nxt = points[j]
        separated = nxt.segment != cur.segment
        gaps.append(Gap(cur.name, nxt.name, nxt.elo - cur.elo, bool(reach), separated))
        rungs.append(nxt)
        i = j
    return Chain(tuple(r.name for r in rungs), tuple(gaps))


# --------------------------------------------------------------------------- checkpoints

def start_rung(rungs: Sequence[str], previous: Optional[Mapping[str, float]]) -> int:
    """Where a checkpoint's walk starts: the highest rung its previous point scored at
    least `HIGH` against (0 without a previous point or such a rung)."""
    start = 0
    for i, r in enumerate(rungs):
        if previous and r in previous and previous[r] >= HIGH:
            start = i
    return start


def next_rung(rungs: Sequence[str], scores: Mapping[str, float], start: int = 0
              ) -> Optional[str]:
    """The next rung a checkpoint plays given its `scores` so far ({rung: score}), or None
    when its walk is done (the module doc: up from `start` until a score <= LOW or the top,
    down from `start` until a score >= HIGH or the bottom)."""
    if not rungs:
        return None
    start = min(max(start, 0), len(rungs) - 1)
    i = start
    while True:
        if rungs[i] not in scores:
            return rungs[i]
        if scores[rungs[i]] <= LOW or i == len(rungs) - 1:
            break
        i += 1
    i = start
    while True:
        if rungs[i] not in scores:
            return rungs[i]
        if scores[rungs[i]] >= HIGH or i == 0:
            return None
        i -= 1


def place(rungs: Sequence[str], scores: Mapping[str, float]) -> tuple[str, str]:
    """(status, why) of a checkpoint with `scores` against the `rungs` it played: "covered"
    (some score strictly between LOW and HIGH), "above" (at least HIGH against the top
    rung and every rung it played), "below" (at most LOW against the bottom rung and all
    it played), else "hole" (it jumped from >= HIGH to <= LOW between two rungs)."""
    played = [(r, scores[r]) for r in rungs if r in scores]
    if not played:
        return HOLE, "it played no rung"
    if any(LOW < s < HIGH for _, s in played):
        return COVERED, ""
    if all(s >= HIGH for _, s in played) and rungs[-1] in scores:
        return ABOVE, (f"scored ≥ {HIGH:.0%} against every reference up to the ladder's top "
                       f"{rungs[-1]}")
    if all(s <= LOW for _, s in played) and rungs[0] in scores:
        return BELOW, (f"scored ≤ {LOW:.0%} against every reference down to the ladder's "
                       f"bottom {rungs[0]}")
    below = [r for r, s in played if s >= HIGH]
    above = [r for r, s in played if s <= LOW]
    low = below[-1] if below else "—"
    high = above[0] if above else "—"
    return HOLE, f"scored ≥ {HIGH:.0%} against {low} and ≤ {LOW:.0%} against {high}"


def next_candidate(candidates: Sequence[str], calibrated: Sequence[str], direction: str
                   ) -> Optional[str]:
    """The candidate to calibrate next to extend the ladder `direction` ("above": after the
    last calibrated one in the candidates' order; "below": before the first), or None."""
    idx = [candidates.index(c) for c in calibrated]
    if direction == ABOVE:
        k = (max(idx) + 1) if idx else 0
        return candidates[k] if k < len(candidates) else None
    if direction == BELOW:
        k = (min(idx) - 1) if idx else -1
        return candidates[k] if k >= 0 else None
    raise ValueError(f"direction must be {ABOVE!r} or {BELOW!r}, got {direction!r}")


# --------------------------------------------------------------------------- the state

class Ladder:
    """The ladder of one comparison, saved in `ladder.json` (module doc).

    `play(a, b)` plays a calibration match and returns an `eval.arena.MatchResult`;
    `on_match(m)` hears each one played (the runner stores it with the comparison's
    matches); `status(text)` hears what is being done (a progress bar's description)."""

    def __init__(self, path: pathlib.Path, game: dict, candidates: Sequence[str],
                 gap: float, games: int):
        self.path = pathlib.Path(path)
        self.game, self.candidates, self.gap, self.games = game, tuple(candidates), gap, games
        self.calibrated: list[str] = []
        self.pairings: list[Pairing] = []
        self.checkpoints: dict[str, dict] = {}
        self._rated: Optional[dict[str, Rated]] = None

    # -- file
    @classmethod
    def open(cls, path: pathlib.Path, game: dict, candidates: Sequence[str], gap: float,
             games: int) -> "Ladder":
        """The saved ladder at `path` (ValueError if it belongs to another game, candidate
        list, gap or games per match), or a new one."""
        lad = cls(path, game, candidates, gap, games)
        if lad.path.exists():
            data = json.loads(lad.path.read_text())
            saved = {k: data.get(k) for k in ("game", "candidates", "gap", "games")}
            given = json.loads(json.dumps({"game": game, "candidates": list(candidates),
                                           "gap": gap, "games": games}))
            diff = sorted(k for k in given if saved[k] != given[k])
            if diff:
                raise ValueError(f"{lad.path} was calibrated with other {', '.join(diff)}; "
                                 f"move it away to calibrate again")
            lad.calibrated = list(data["calibrated"])
            lad.pairings = [Pairing.from_dict(p) for p in data["matches"]]
            lad.checkpoints = dict(data.get("checkpoints", {}))
        return lad

    def save(self) -> None:
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1))
        tmp.replace(self.path)

    def to_dict(self) -> dict:
        chain = self.chain()
        return {"game": self.game, "candidates": list(self.candidates), "gap": self.gap,
                "games": self.games, "calibrated": self.calibrated,
                "ratings": {n: r.to_dict() for n, r in self.rated().items()},
                **chain.to_dict(), "holes": [g.describe() for g in chain.holes],
                "out_of_range": self.out_of_range(),
                "matches": [p.to_dict() for p in self.pairings],
                "checkpoints": self.checkpoints}

    # -- the fit and the chain
    def rated(self) -> dict[str, Rated]:
        if not self.calibrated:
            return {}
        if self._rated is None:
            order = sorted(self.calibrated, key=self.candidates.index)
            self._rated = fit_candidates([self.candidates[0]] + [
                c for c in order if c != self.candidates[0]], self.pairings)
        return self._rated

    def chain(self) -> Chain:
        return select(self.rated(), self.gap)

    @property
    def rungs(self) -> tuple[str, ...]:
        return self.chain().rungs

    def met(self, a: str, b: str) -> bool:
        return any({p.a, p.b} == {a, b} for p in self.pairings)

    def out_of_range(self) -> dict[str, str]:
        """{checkpoint label: why} for the checkpoints no rung places."""
        return {k: f"{v['status']}: {v['why']}" for k, v in self.checkpoints.items()
                if v["status"] != COVERED}

    # -- calibration
    def _play(self, a: str, b: str, play: Callable[[str, str], Any],
              on_match: Callable[[Any], None], status: Callable[[str], None]) -> None:
        if self.candidates.index(a) > self.candidates.index(b):
            a, b = b, a
        status(f"ladder: {a} vs {b}")
        m = play(a, b)
        on_match(m)
        self.pairings.append(Pairing.from_match(m))
        self._rated = None
        self.save()

    def settle(self, play, on_match=lambda m: None, status=lambda s: None) -> None:
        """Play every pair of fitted neighbours that has not met, until none is left."""
        while True:
            order = list(self.rated())
            todo = [(a, b) for a, b in zip(order, order[1:]) if not self.met(a, b)]
            if not todo:
                return
            self._play(*todo[0], play, on_match, status)

    def add(self, name: str, play, on_match=lambda m: None, status=lambda s: None) -> None:
        """Calibrate candidate `name`: it plays the strongest calibrated candidate (the
        weakest when it comes from below the list), then the neighbours settle."""
        if name in self.calibrated:
            return
        others = list(self.rated())
        below = others and self.candidates.index(name) < min(
            self.candidates.index(c) for c in self.calibrated)
        self.calibrated.append(name)
        self._rated = None
        if others:
            self._play(others[0] if below else others[-1], name, play, on_match, status)
        self.settle(play, on_match, status)
        self.save()

    def start(self, play, on_match=lambda m: None, status=lambda s: None) -> None:
        """The initial ladder: the first `INITIAL` candidates calibrated (no-op when saved)."""
        for name in self.candidates[:INITIAL]:
            self.add(name, play, on_match, status)
        self.settle(play, on_match, status)
        self.save()

    def extend(self, direction: str, play, on_match=lambda m: None, status=lambda s: None
               ) -> bool:
        """Calibrate candidates beyond the ladder's end `direction` ("above" / "below")
        until the chain has a new end rung there, or the candidates run out (False)."""
        end = self.rungs[-1] if direction == ABOVE else self.rungs[0]
        sign = 1.0 if direction == ABOVE else -1.0
        grew = False
        while True:
            name = next_candidate(self.candidates, self.calibrated, direction)
            if name is None:
                return grew
            self.add(name, play, on_match, status)
            rated = self.rated()
            new_end = self.rungs[-1] if direction == ABOVE else self.rungs[0]
            grew = grew or new_end != end
            # Keep calibrating while the newest candidate is within one gap of the old end:
            # a farther one may still make a longer step.
            r = rated.get(name)
            if grew and (r is None or sign * (r.elo - rated[end].elo) > self.gap
                         or r.segment != rated[end].segment):
                return True


def for_comparison(spec: Any, env: Any, out: pathlib.Path) -> Ladder:
    """The ladder of comparison `spec` (a `compare.spec.Comparison` with `ladder`) in
    directory `out`: its saved `ladder.json`, or a new one."""
    return Ladder.open(pathlib.Path(out) / LADDER_FILE, env.describe(), spec.references,
                       spec.ladder_gap, spec.games)


def rate_checkpoint(lad: Ladder, label: str, scores: dict[str, float],
                    previous: Optional[Mapping[str, float]], play_rung: Callable[[str], float],
                    play, on_match=lambda m: None, status=lambda s: None) -> dict:
    """Walk checkpoint `label` up and down the ladder (`next_rung`), extending the ladder
    when it is above the top or below the bottom (`Ladder.extend`), and record where it
    landed in `lad.checkpoints` (saved). `scores`: its scores so far against candidates
    ({name: score}, from the stored matches; updated); `previous`: its previous point's
    (where the walk starts); `play_rung(name)` plays it against a candidate and returns
    its score; `play`, `on_match`, `status`: as for `Ladder.add`."""
    start = start_rung(lad.rungs, previous)
    while True:
        rung = next_rung(lad.rungs, scores, start)
        if rung is not None:
            status(f"{label} vs {rung}")
            scores[rung] = play_rung(rung)
            continue
        where, why = place(list(lad.rated()), scores)
        if where in (ABOVE, BELOW) and lad.extend(where, play, on_match, status):
            start = start_rung(lad.rungs, scores)
            continue
        break
    order = [c for c in lad.rated() if c in scores]
    lad.checkpoints[label] = {"status": where, "why": why,
                              "scores": {c: scores[c] for c in order}}
    lad.save()
    return lad.checkpoints[label]


# --------------------------------------------------------------------------- keys, text

def pair_key(key: jax.Array, a: str, b: str) -> jax.Array:
    """A match key that depends on the two names only (stable as candidates or checkpoints
    are added): fold_in(key, crc32('a|b'))."""
    return jax.random.fold_in(key, zlib.crc32(f"{a}|{b}".encode()) & 0x7FFFFFFF)


def markdown(summary: Mapping) -> str:
    """A few lines for the report: the rungs with their ratings, the holes, and the
    checkpoints out of range (from `Ladder.to_dict()`)."""
    ratings = summary.get("ratings", {})
    rungs = ", ".join(f"{r} ({ratings[r]['elo']:+.0f})" if r in ratings else r
                      for r in summary.get("rungs", []))
    lines = [f"Reference ladder (neighbours ≤ {summary['gap']:.0f} Elo apart where the "
             f"candidates allow; calibrated on {len(summary.get('matches', []))} matches of "
             f"{summary['games']} games, cached in {LADDER_FILE}): {rungs}."]
    holes = summary.get("holes", [])
    lines.append("Holes the candidates cannot close: " + ("; ".join(holes) if holes
                                                           else "none."))
    out = summary.get("out_of_range", {})
    if out:
        lines.append(f"**Out of range ({len(out)} checkpoint{'s' * (len(out) != 1)}: no "
                     f"reference between {LOW:.0%} and {HIGH:.0%}: their ratings rest on "
                     f"lopsided scores, bounds more than estimates):** "
                     + "; ".join(f"{k}: {v}" for k, v in sorted(out.items())))
    else:
        lines.append(f"Every rated checkpoint scored between {LOW:.0%} and {HIGH:.0%} "
                     f"against at least one reference.")
    return "\n\n".join(lines)
