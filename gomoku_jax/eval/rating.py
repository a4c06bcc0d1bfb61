"""Ratings from game records: one joint maximum-likelihood fit with a first-move term.

`fit_games` takes one record per game (who moved first, who moved second, the first mover's
score) and fits every player's Elo rating, the advantage of moving first, and (with draws)
Davidson's draw parameter in one maximum-likelihood fit, with the covariance of the joint
fit. It replaces a fit on win/draw/loss totals, which cannot see colours (a first-move edge
then compresses every gap) and needs a prior to keep perfect scores finite.

The model. With d = r_first - r_second + h (Elo; h the first-move advantage) and
delta = d ln(10) / 400 (natural units):

- ``draws="davidson"`` (Davidson 1970): with nu = exp(eta) >= 0,
  P(first wins) = e^(delta/2) / Z, P(draw) = nu / Z, P(first loses) = e^(-delta/2) / Z,
  Z = e^(delta/2) + e^(-delta/2) + nu. The win/loss odds are e^delta = 10^(d/400), the
  logistic Elo scale, and P(win) + P(draw)/2 = 1/2 at d = 0. Without draws nu = 0 and
  this is Bradley-Terry: P(first wins) = 1 / (1 + 10^(-d/400)).
- ``draws="half"``: Bradley-Terry with a draw counted as half a win and half a loss (the
  score s in {0, 1/2, 1} enters as s log p + (1 - s) log(1 - p), p the logistic expected
  score), a quasi-likelihood; the covariance is scaled by the Pearson dispersion
  sum (s - p)^2 / (p (1 - p)) / (games - parameters) when there are draws (draws make a
  game's score less variable than a Bernoulli's, so the dispersion is below 1).

Davidson's model is the default because a draw then carries its own information (in the
half-point model a draw is worth exactly a half win, and the variance of a game's score is
mis-stated, hence the dispersion). Its Elo scale is set by the win/loss odds, so with many
draws a Davidson gap reads larger than the same data's half-point gap; pick one model for
a comparison. Both are exponential families in (ratings, h, eta) whose log-likelihood is
concave; Newton's method (with a backtracking line search) converges in a few steps. No
prior: the fit is the plain maximum likelihood, so a rating that the games determine is not
pulled anywhere.

The standard errors are those of the joint fit: the covariance is the inverse Fisher
information I^-1 of all the free parameters (every rating but the anchor's, h, eta) at the
maximum (for these models the observed and the expected information are equal), so the
standard error of a difference r_i - r_j is sqrt(C_ii + C_jj - 2 C_ij), with the
opponents' uncertainty and the correlation between the two ratings included.

Weights. `weights` (one per game, > 0) make the likelihood sum_g w_g log P(result_g): a
game of weight w counts as w games in the estimates and in the information, so the
covariance is that of sum(w) games. Its use is games that repeat: a match of G games of
which only D differ (deterministic agents replay an opening move for move) carries about
D games' information, not G; weighting its games by D / G keeps the match's results and
gives them the information of D games (exact when every distinct game repeats equally
often). Weights of 1 are the plain fit; the same games twice at weight 1/2 are the same fit.

Separation. When a player's results cannot be explained by any finite rating (it won, or
lost, every game against everyone it met, and more generally when a set of players won every
game against the rest), its maximum-likelihood rating is infinite. The fit finds these
players (the strongly connected components of the "scored at least a draw against" graph,
Zermelo's condition), fits the games inside the components (the anchor's gives the ratings;
the others still inform h and nu), and reports each separated player as a one-sided bound
against the rated players it met: the rating t at which its results (all wins, or all
losses: the most extreme outcome there is, so their probability is the tail probability)
have probability (1 - confidence) / 2 with the rest of the fit re-maximised (the profile
likelihood), i.e. 2 (max log L - max log L | r_j = t) = -2 log((1 - confidence) / 2)
(7.38 at 95%). Against one opponent of known rating this is exactly the Clopper-Pearson
bound of `elo.estimate` (> +365.2 for 32 wins of 32 against a 0): a one-sided 97.5% bound,
the finite end of a two-sided 95% interval. Never a finite ± interval. (The usual profile
threshold z^2 = 3.84 would undercover here: at a zero-failure count it is a bound at which
the observed sweep still has probability exp(-1.92) = 15%.)
The games between components are the separated ones; their outcome is what the ratings'
limit predicts with certainty, so they drop out of the rated players' fit. A player below
(or above) the anchor's component that never met a rated player gets no finite bound (its
games against other separated players are not used for the bound); one with no order
relative to the anchor is "undetermined"; one with no games is "no games". None of these
stops the fit.

Other degenerate data: when the games cannot determine h (the first mover won every game
where the colours could be compared, so h -> inf; or the colours never swap), h is fixed at
0 and reported as nan (`first_move_fitted` False). When Davidson's likelihood has no finite
maximum (the decisive games and the draws fit a strict order with a draw band, e.g. the
first mover never lost, or every game was drawn: nu -> inf) the fit uses half points and
says so in `draws`. Each case is found exactly (graph components, or a small linear
feasibility problem that runs only when a cheap sufficient test fails).

Everything runs on the host in NumPy (SciPy for the graph components and, rarely, a linear
program); each Newton step costs O(cells + P^2) with the games aggregated into
(first, second) cells, then an O(P^3) solve.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Optional

import numpy as np

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile (as elo.Z95)
_C = math.log(10.0) / 400.0  # natural units (log odds) per Elo point

ANCHOR, RATED, ABOVE, BELOW, UNDETERMINED, NO_GAMES = (
    "anchor", "rated", "above", "below", "undetermined", "no games")


@dataclasses.dataclass(frozen=True)
class GameFit:
    """The joint fit of `fit_games`. P players; Elo throughout; `ratings[anchor] == 0`.

    Attributes:
      ratings: float64[P]. Finite for the anchor and the rated players; +inf for a player
        separated above the rated ones (it won every game against them), -inf below, nan for
        one the games place nowhere (no games, or games only with players that are not rated
        and no order between it and the anchor's group).
      covariance: float64[P, P], Elo^2, the inverse Fisher information of the joint fit; the
        anchor's row and column are 0, those of players that are not rated are nan.
      first_move: the Elo advantage of moving first, h (0.0 when `first_move=False`).
      first_move_se: its standard error (0.0 when `first_move=False`).
      first_move_fitted: False when h was fixed at 0: by `first_move=False`, or because the
        games cannot determine it (the first mover won every game where colours could be
        compared, or colours never swap); then `first_move` and its se are nan.
      status: per player: "anchor", "rated", "above", "below", "undetermined", "no games".
      lower, upper: float64[P], each rating's `confidence` interval: rating ∓ z se for the
        rated (the anchor: 0, 0), (bound, +inf) above, (-inf, bound) below, where the bound
        is the profile-likelihood one of the module doc (±inf when the player met no rated
        player), (-inf, +inf) undetermined, nan with no games.
      games: int64[P], games each player played (both colours).
      draws: the draw model used: "davidson" or "half". "davidson" falls back to "half"
        when Davidson's likelihood has no finite maximum: when ratings exist that put every
        decisive game beyond a band that holds every draw (a strict order with draws between
        neighbours; e.g. the first mover never lost, or every game was drawn); nu -> inf
        there, while the half-point model's maximum exists.
      draw_param: Davidson's nu (0.0 without draws, nan for "half").
      dispersion: the Pearson dispersion applied to "half"'s covariance (1.0 otherwise).
      log_likelihood: at the maximum, over the games that are not separated (the separated
        ones contribute their limit, 0).
      separated_games: games between separated components, left out of the rated fit.
      converged: whether Newton's method met its tolerance.
      iterations: Newton steps taken.
      anchor: the anchor's index.
      confidence: the level of `lower` / `upper` (0.95).
    """

    ratings: np.ndarray
    covariance: np.ndarray
    first_move: float
    first_move_se: float
    first_move_fitted: bool
    status: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    games: np.ndarray
    draws: str
    draw_param: float
    dispersion: float
    log_likelihood: float
    separated_games: int
    converged: bool
    iterations: int
    anchor: int
    confidence: float = 0.95

    @property
    def num_players(self) -> int:
        return len(self.ratings)

    @property
    def stderr(self) -> np.ndarray:
        """float64[P]: sqrt(diag(covariance)); 0 for the anchor, nan if not rated."""
        return np.sqrt(np.diag(self.covariance))

    @property
    def rated(self) -> np.ndarray:
        """bool[P]: players with a finite rating (the anchor included)."""
        return np.isin(np.asarray(self.status), (ANCHOR, RATED))

    def difference(self, i: int, j: int) -> tuple[float, float]:
        """(r_i - r_j, its standard error sqrt(C_ii + C_jj - 2 C_ij)) in Elo.

        When i or j is not rated the estimate is ±inf or nan and the standard error nan."""
        c = self.covariance
        est = float(self.ratings[i] - self.ratings[j]) if i != j else 0.0
        var = c[i, i] + c[j, j] - 2.0 * c[i, j]
        return est, float(math.sqrt(max(var, 0.0))) if np.isfinite(var) else math.nan

    def difference_interval(self, i: int, j: int, confidence: Optional[float] = None
                            ) -> tuple[float, float, float]:
        """(estimate, lower, upper): r_i - r_j ∓ z se (nan ends if either is not rated)."""
        est, se = self.difference(i, j)
        z = _z(self.confidence if confidence is None else confidence)
        return est, est - z * se, est + z * se

    def to_dict(self) -> dict:
        """JSON-ready: lists, infinities and nans as None."""
        def clean(v):
            if isinstance(v, np.ndarray):
                return clean(v.tolist())
            if isinstance(v, (list, tuple)):
                return [clean(x) for x in v]
            if isinstance(v, float) and not math.isfinite(v):
                return None
            return v
        return {f.name: clean(getattr(self, f.name)) for f in dataclasses.fields(self)}


def json_number(x: Any) -> Optional[float]:
    """A number for JSON: a float, or None for None, nan and the infinities (a separated
    player's rating, an undefined standard error)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if confidence == 0.95:
        return Z95
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


# ------------------------------------------------------------------------- the likelihood

@dataclasses.dataclass
class _Cells:
    """Games aggregated by (first, second): columns into the parameter vector (K = the dump
    column for a fixed rating, sliced off), an offset (natural units) and the counts."""

    f: np.ndarray
    s: np.ndarray
    offset: np.ndarray
    w: np.ndarray
    d: np.ndarray
    l: np.ndarray

    @property
    def n(self) -> np.ndarray:
        return self.w + self.d + self.l

    def take(self, mask: np.ndarray) -> "_Cells":
        return _Cells(*(getattr(self, k)[mask] for k in ("f", "s", "offset", "w", "d", "l")))

    @staticmethod
    def concat(a: "_Cells", b: "_Cells") -> "_Cells":
        return _Cells(*(np.concatenate([getattr(a, k), getattr(b, k)])
                        for k in ("f", "s", "offset", "w", "d", "l")))


class _Model:
    """Log-likelihood, gradient and information of a cell set in theta = (free ratings, h)
    plus eta (Davidson with draws). K = len(theta); column K is the dump for fixed ratings."""

    def __init__(self, cells: _Cells, k: int, h_col: Optional[int], davidson: bool):
        self.c, self.k, self.h_col, self.davidson = cells, k, h_col, davidson
        if not davidson:  # Bradley-Terry on points (half) or with no draws at all
            self.a = cells.w + 0.5 * cells.d
            self.b = cells.l + 0.5 * cells.d

    def delta(self, theta: np.ndarray) -> np.ndarray:
        t = np.append(theta, 0.0)
        h = theta[self.h_col] if self.h_col is not None else 0.0
        return t[self.c.f] - t[self.c.s] + h + self.c.offset

    def loglik(self, theta: np.ndarray, eta: float) -> float:
        dl = self.delta(theta)
        if not self.davidson:
            return float(-np.sum(self.a * np.logaddexp(0.0, -dl) + self.b * np.logaddexp(0.0, dl)))
        log_z = _log_z(dl, eta)
        c = self.c
        return float(np.sum((c.w - c.l) * dl / 2.0 + c.d * eta - c.n * log_z))

    def derivatives(self, theta: np.ndarray, eta: float):
        """(gradient [K (+1)], information [K (+1), K (+1)]), eta last when Davidson."""
        dl = self.delta(theta)
        c, n = self.c, self.c.n
        if not self.davidson:
            p = 1.0 / (1.0 + np.exp(-dl))
            g_d = self.a - n * p
            i_dd = n * p * (1.0 - p)
        else:
            log_z = _log_z(dl, eta)
            pw, pl = np.exp(dl / 2.0 - log_z), np.exp(-dl / 2.0 - log_z)
            pd = np.exp(eta - log_z)
            g_d = (c.w - c.l) / 2.0 - n * (pw - pl) / 2.0
            i_dd = n * ((pw + pl) / 4.0 - (pw - pl) ** 2 / 4.0)
            i_de = -n * (pw - pl) * pd / 2.0
            g_e, i_ee = float(np.sum(c.d - n * pd)), float(np.sum(n * (pd - pd * pd)))
        grad = self._vector(g_d)
        info = self._gram(i_dd)
        if self.davidson:
            cross = self._vector(i_de)
            grad = np.append(grad, g_e)
            info = np.block([[info, cross[:, None]], [cross[None, :], np.array([[i_ee]])]])
        return grad, info

    def _vector(self, v: np.ndarray) -> np.ndarray:
        """sum over cells of v_c x_c, x_c = e_f - e_s (+ e_h)."""
        k = self.k
        out = (np.bincount(self.c.f, v, minlength=k + 1)
               - np.bincount(self.c.s, v, minlength=k + 1))[:k]
        if self.h_col is not None:
            out[self.h_col] += v.sum()
        return out

    def _gram(self, v: np.ndarray) -> np.ndarray:
        """sum over cells of v_c x_c x_c^T (K x K)."""
        return _gram(self.c.f, self.c.s, v, self.k, self.h_col)


def _gram(f: np.ndarray, s: np.ndarray, v: np.ndarray, k: int, h_col: Optional[int]
          ) -> np.ndarray:
    m = k + 1
    rows = np.concatenate([f, s, f, s])
    cols = np.concatenate([f, s, s, f])
    vals = np.concatenate([v, v, -v, -v])
    g = np.bincount(rows * m + cols, vals, minlength=m * m).reshape(m, m)[:k, :k]
    if h_col is not None:
        side = (np.bincount(f, v, minlength=m) - np.bincount(s, v, minlength=m))[:k]
        g[h_col, :] += side
        g[:, h_col] += side
        g[h_col, h_col] += v.sum()  # (side[h_col] is 0: no cell has h as a player)
    return g


def _log_z(dl: np.ndarray, eta: float) -> np.ndarray:
    m = np.maximum(np.abs(dl) / 2.0, eta)
    return m + np.log(np.exp(dl / 2.0 - m) + np.exp(-dl / 2.0 - m) + np.exp(eta - m))


def _newton(model: _Model, basis: Optional[np.ndarray], theta: np.ndarray, eta: float,
            max_iterations: int = 100, tolerance: float = 1e-10):
    """Maximise the (concave) log-likelihood over theta in span(basis) (+ eta).
    Returns (theta, eta, loglik, information, converged, iterations)."""
    ll = model.loglik(theta, eta)
    converged, it = False, 0
    while it < max_iterations:
        it += 1
        grad, info = model.derivatives(theta, eta)
        step = _solve(info, grad, basis, model.davidson)
        scale = 1.0
        for _ in range(60):  # backtracking: Newton's step is almost always taken whole
            new_theta = theta + scale * step[:model.k]
            new_eta = eta + scale * step[model.k] if model.davidson else eta
            new_ll = model.loglik(new_theta, new_eta)
            if new_ll >= ll - 1e-12 * (1.0 + abs(ll)):
                break
            scale /= 2.0
        theta, eta, ll = new_theta, new_eta, new_ll
        if np.max(np.abs(scale * step), initial=0.0) < tolerance:
            converged = True
            break
    _, info = model.derivatives(theta, eta)
    return theta, eta, ll, info, converged, it


def _reduce(info: np.ndarray, basis: Optional[np.ndarray], davidson: bool):
    """The basis of the identified directions in (theta, eta) coordinates."""
    if basis is None:
        return None
    if davidson:
        k, m = basis.shape
        full = np.zeros((k + 1, m + 1))
        full[:k, :m], full[k, m] = basis, 1.0
        return full
    return basis


def _solve(info: np.ndarray, grad: np.ndarray, basis, davidson: bool) -> np.ndarray:
    q = _reduce(info, basis, davidson)
    if q is not None and q.shape[1] == 0:  # nothing left to fit (every game separated)
        return np.zeros(len(grad))
    a, b = (info, grad) if q is None else (q.T @ info @ q, q.T @ grad)
    try:
        x = np.linalg.solve(a, b)
    except np.linalg.LinAlgError:  # numerically singular far from the maximum
        x = np.linalg.lstsq(a, b, rcond=None)[0]
    return x if q is None else q @ x


def _inverse(info: np.ndarray, basis, davidson: bool) -> np.ndarray:
    """The covariance: I^-1, or Q (Q^T I Q)^-1 Q^T on the identified subspace."""
    q = _reduce(info, basis, davidson)
    if q is None:
        return np.linalg.inv(info)
    if q.shape[1] == 0:
        return np.zeros_like(info)
    return q @ np.linalg.inv(q.T @ info @ q) @ q.T


# ----------------------------------------------------------------------------- the fit

def _validate(first, second, score, num_players, anchor, draws):
    if isinstance(num_players, bool) or int(num_players) != num_players or num_players < 1:
        raise ValueError(f"num_players must be a positive int, got {num_players!r}")
    p = int(num_players)
    if isinstance(anchor, bool) or int(anchor) != anchor or not 0 <= anchor < p:
        raise ValueError(f"anchor must be a player index in 0..{p - 1}, got {anchor!r}")
    if draws not in ("davidson", "half"):
        raise ValueError(f"draws must be 'davidson' or 'half', got {draws!r}")
    arrays = []
    for name, x in (("first", first), ("second", second)):
        a = np.asarray(x)
        if a.ndim != 1:
            raise ValueError(f"{name} must be a 1-D array of player indices, got shape "
                             f"{a.shape}")
        if a.size and not np.issubdtype(a.dtype, np.integer):
            if not np.issubdtype(a.dtype, np.number) or np.any(a != np.round(a)):
                raise ValueError(f"{name} must hold integer player indices, got {a.dtype}")
        a = a.astype(np.int64)
        if a.size and (a.min() < 0 or a.max() >= p):
            bad = np.unique(a[(a < 0) | (a >= p)])[:5].tolist()
            raise ValueError(f"{name} holds player indices outside 0..{p - 1}: {bad}")
        arrays.append(a)
    s = np.asarray(score, np.float64)
    if s.ndim != 1:
        raise ValueError(f"score must be a 1-D array, got shape {s.shape}")
    if not len(arrays[0]) == len(arrays[1]) == len(s):
        raise ValueError(f"first, second and score must have one entry per game, got lengths "
                         f"{len(arrays[0])}, {len(arrays[1])} and {len(s)}")
    if not np.all(np.isin(s, (0.0, 0.5, 1.0))):
        bad = np.unique(s[~np.isin(s, (0.0, 0.5, 1.0))])[:5].tolist()
        raise ValueError(f"score must be the first mover's 1 (win), 0.5 (draw) or 0 (loss), "
                         f"got {bad}")
    if np.any(arrays[0] == arrays[1]):
        g = int(np.flatnonzero(arrays[0] == arrays[1])[0])
        raise ValueError(f"game {g}: player {arrays[0][g]} cannot play itself")
    return arrays[0], arrays[1], s, p


def fit_games(first, second, score, *, num_players: int, anchor: int = 0,
              draws: str = "davidson", first_move: bool = True,
              confidence: float = 0.95, max_iterations: int = 100,
              weights=None) -> GameFit:
    """Elo ratings, the first-move advantage and their joint covariance from game records.

    The model, the standard errors and the treatment of separated players are in the module
    doc. Deterministic; plain maximum likelihood (no prior).

    Args:
      first: int[G], the index (0..P-1) of the player who moved first in each game.
      second: int[G], the index of the player who moved second.
      score: float[G], the first mover's score: 1 (won), 0.5 (drew) or 0 (lost).
      num_players: P. A player with no games is reported with status "no games" and a nan
        rating (the fit goes on without it).
      anchor: the player rated 0 (it must have played).
      draws: "davidson" (draws as Davidson's third outcome) or "half" (half a point each).
      first_move: fit the first-move advantage h (True) or fix it at 0.
      confidence: the level of `lower` / `upper` and of the separated players' bounds.
      max_iterations: Newton steps at most.
      weights: optional float[G] > 0, each game's weight in the likelihood (default 1): a
        game of weight w counts as w games, in the estimates and in the information, so the
        covariance is that of sum(weights) games (weights of 1 change nothing; every game
        twice at weight 1/2 is the same fit). For games known to repeat, e.g. a match whose
        G games hold D distinct ones, weight D / G gives the match the information of its
        distinct games. `games` still counts games played.
    Returns:
      A `GameFit` (float64 arrays of shape [P] and [P, P]).
    Raises:
      ValueError: arrays of different lengths or not 1-D, indices outside 0..P-1, a player
        listed as its own opponent, scores other than 0 / 0.5 / 1, an anchor with no games,
        weights that are not finite and positive or not one per game.
        Data the model cannot fit do not raise: separated players get bounds, an
        undetermined first-move advantage is fixed at 0 (`first_move_fitted`), and
        Davidson's model falls back to half points when it has no finite maximum (`draws`).
    """
    first, second, score, p = _validate(first, second, score, num_players, anchor, draws)
    if weights is None:
        weight = np.ones(len(score))
    else:
        weight = np.asarray(weights, np.float64)
        if weight.shape != score.shape:
            raise ValueError(f"weights must have one entry per game ({len(score)}), got "
                             f"shape {weight.shape}")
        if not np.all(np.isfinite(weight) & (weight > 0)):
            raise ValueError("weights must be finite and positive")
    z = _z(confidence)
    games = np.bincount(first, minlength=p) + np.bincount(second, minlength=p)
    if games[anchor] == 0:
        raise ValueError(f"the anchor (player {anchor}) played no games; choose another "
                         f"anchor")

    # Aggregate by (first, second) cell.
    key = first * p + second
    cells_key, inv = np.unique(key, return_inverse=True)
    w = np.bincount(inv, weight * (score == 1.0), minlength=len(cells_key))
    d = np.bincount(inv, weight * (score == 0.5), minlength=len(cells_key))
    l = np.bincount(inv, weight * (score == 0.0), minlength=len(cells_key))
    played = np.bincount(inv, minlength=len(cells_key))
    cf, cs = cells_key // p, cells_key % p

    # Separation: strongly connected components of "scored against" (a draw goes both ways).
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order, connected_components

    scored = np.concatenate([cf[(w + d) > 0], cs[(l + d) > 0]])
    conceded = np.concatenate([cs[(w + d) > 0], cf[(l + d) > 0]])
    graph = csr_matrix((np.ones(len(scored)), (scored, conceded)), shape=(p, p))
    _, comp = connected_components(graph, directed=True, connection="strong")
    inside = comp[cf] == comp[cs]
    separated_games = int(np.sum(played[~inside]))

    # h is fitted unless the games cannot determine it: then it is fixed at 0 (and reported
    # as nan), which leaves the ratings' separation analysis above exact.
    fit_h = first_move and inside.any() and not _first_move_separable(
        cf[inside], cs[inside], w[inside], d[inside], l[inside], p, anchor)
    while True:
        col, k, h_col = _columns(p, anchor, fit_h)
        all_cells = _Cells(col[cf], col[cs], np.zeros(len(cf)), w.astype(float),
                           d.astype(float), l.astype(float))
        fit_cells = all_cells.take(inside)
        # The identified directions: the row space of the fitted cells' design.
        gram = _gram(fit_cells.f, fit_cells.s, np.ones(len(fit_cells.f)), k, h_col)
        evals, evecs = np.linalg.eigh(gram)
        keep = evals > 1e-9 * max(evals.max(initial=0.0), 1.0)
        basis = None if keep.all() else evecs[:, keep]

        def identified(j: int) -> bool:
            # e_j lies in the span of the basis (orthonormal columns)
            return basis is None or float(np.linalg.norm(basis[j])) > 1.0 - 1e-6

        if h_col is None or identified(h_col):
            break
        fit_h = False  # colours never compared (e.g. each pair met with one colour only)

    has_draws = bool(fit_cells.d.sum() > 0)
    davidson = draws == "davidson" and has_draws
    if davidson and _davidson_separable(fit_cells, k, h_col):
        # Davidson's likelihood grows without bound (nu and some ratings -> inf together);
        # the half-point model's does not (its separation is the one handled above).
        draws, davidson = "half", False
    model = _Model(fit_cells, k, h_col, davidson)
    eta = 0.0
    if davidson:
        pd = fit_cells.d.sum() / fit_cells.n.sum()
        eta = math.log(2.0 * pd / (1.0 - pd))
    theta, eta, ll, info, converged, iterations = _newton(
        model, basis, np.zeros(k), eta, max_iterations)
    cov = _inverse(info, basis, davidson)[:k, :k]

    dispersion = 1.0
    if draws == "half" and has_draws:
        dl = model.delta(theta)
        pr = 1.0 / (1.0 + np.exp(-dl))
        fc = fit_cells
        pearson = np.sum((fc.w * (1 - pr) ** 2 + fc.d * (0.5 - pr) ** 2 + fc.l * pr ** 2)
                         / (pr * (1 - pr)))
        dof = fc.n.sum() - (k if basis is None else basis.shape[1])
        decisive = fc.w.sum() + fc.l.sum() > 0
        # With no decisive game the estimate is 0 (every score is exactly 1/2); it says
        # nothing about the variance then, and 1 (a Bernoulli's) is the conservative choice.
        dispersion = float(pearson / dof) if dof > 0 and decisive else 1.0
        cov = cov * dispersion

    # Status of each player.
    status = []
    for i in range(p):
        if i == anchor:
            status.append(ANCHOR)
        elif games[i] == 0:
            status.append(NO_GAMES)
        elif identified(col[i]):
            status.append(RATED)
        else:
            status.append(None)
    rated = np.array([s in (ANCHOR, RATED) for s in status])
    pending = [i for i in range(p) if status[i] is None]
    if pending:
        down = np.zeros(p, bool)  # reachable from the anchor: the anchor's side scored on it
        down[breadth_first_order(graph, anchor, directed=True, return_predecessors=False)] = True
        up = np.zeros(p, bool)  # it (transitively) scored against the anchor's side
        up[breadth_first_order(graph.T.tocsr(), anchor, directed=True,
                               return_predecessors=False)] = True
        for i in pending:
            status[i] = ABOVE if up[i] and not down[i] else (
                BELOW if down[i] and not up[i] else UNDETERMINED)

    scale = 1.0 / _C
    ratings = np.full(p, np.nan)
    covariance = np.full((p, p), np.nan)
    idx = np.flatnonzero(rated & (np.arange(p) != anchor))
    ratings[anchor] = 0.0
    ratings[idx] = theta[col[idx]] * scale
    covariance[np.ix_(idx, idx)] = cov[np.ix_(col[idx], col[idx])] * scale ** 2
    covariance[anchor, :] = np.where(rated, 0.0, np.nan)
    covariance[:, anchor] = covariance[anchor, :]
    se = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    lower, upper = ratings - z * se, ratings + z * se
    for i in range(p):
        if status[i] == NO_GAMES:
            lower[i] = upper[i] = np.nan
        elif status[i] == UNDETERMINED:
            lower[i], upper[i] = -math.inf, math.inf
        elif status[i] in (ABOVE, BELOW):
            sign = 1.0 if status[i] == ABOVE else -1.0
            ratings[i] = sign * math.inf
            bound = _profile_bound(i, sign, all_cells, cf, cs, rated, col, model, basis,
                                   theta, eta, ll, -2.0 * math.log((1.0 - confidence) / 2.0))
            lower[i], upper[i] = (bound, math.inf) if sign > 0 else (-math.inf, bound)
    if h_col is not None:
        h, h_se = float(theta[h_col] * scale), float(math.sqrt(cov[h_col, h_col]) * scale)
    else:  # fixed at 0: by request (0.0), or because the games cannot determine it (nan)
        h, h_se = (math.nan, math.nan) if first_move else (0.0, 0.0)
    if draws == "half":
        nu = math.nan
    else:
        nu = float(np.exp(eta)) if davidson else 0.0
    return GameFit(ratings, covariance, h, h_se, h_col is not None, tuple(status), lower, upper,
                   games.astype(np.int64), draws, nu, dispersion, ll, separated_games,
                   bool(converged), int(iterations), int(anchor), confidence)


def _columns(p: int, anchor: int, fit_h: bool):
    """Each player's column in theta (the anchor's is the dump column K), K, h's column."""
    col = np.full(p, -1, np.int64)
    others = np.array([i for i in range(p) if i != anchor], np.int64)
    col[others] = np.arange(len(others))
    k = len(others) + (1 if fit_h else 0)
    col[anchor] = k
    return col, k, (len(others) if fit_h else None)


def _davidson_separable(cells: _Cells, k: int, h_col: Optional[int]) -> bool:
    """Whether Davidson's likelihood has a direction of recession with nu -> inf: ratings
    (and h) with delta >= 1 in every cell with a win, <= -1 with a loss, |delta| <= 1 with a
    draw (the results are a strict order with a band of draws, e.g. the first mover never
    lost). A linear feasibility problem, skipped when a cell has both a win and a loss."""
    if np.any((cells.w > 0) & (cells.l > 0)):
        return False
    from scipy.optimize import linprog

    n = len(cells.f)
    x = np.zeros((n, k + 1))
    x[np.arange(n), cells.f] += 1.0
    x[np.arange(n), cells.s] -= 1.0
    if h_col is not None:
        x[:, h_col] = 1.0
    x = x[:, :k]
    win, loss, draw = cells.w > 0, cells.l > 0, cells.d > 0
    a_ub = np.concatenate([-x[win], x[loss], x[draw & ~win], -x[draw & ~loss]])
    b_ub = -np.ones(len(a_ub))
    b_ub[win.sum() + loss.sum():] = 1.0
    res = linprog(np.zeros(k), A_ub=a_ub, b_ub=b_ub, bounds=[(None, None)] * k,
                  method="highs")
    return res.status == 0


def _first_move_separable(cf, cs, w, d, l, p, anchor) -> bool:
    """Whether a direction of recession moves h: some ratings make every game's result
    consistent with h -> +inf (or -inf), so h has no finite maximum-likelihood value. A
    linear feasibility problem, solved only when no pair met with both colours and mixed
    results in both (which forces h's direction to 0 at once)."""
    mixed = (d > 0) | ((w > 0) & (l > 0))
    m_key = set(zip(cf[mixed].tolist(), cs[mixed].tolist()))
    if any((b, a) in m_key for a, b in m_key):
        return False
    from scipy.optimize import linprog

    n = len(cf)
    rows = np.zeros((n, p))
    rows[np.arange(n), cf] += 1.0
    rows[np.arange(n), cs] -= 1.0
    rows = np.delete(rows, anchor, axis=1)
    for sign in (1.0, -1.0):
        # v = lambda_f - lambda_s + sign: >= 0 for wins, <= 0 for losses, = 0 when mixed.
        win, loss = (w > 0) & ~mixed, (l > 0) & ~mixed
        a_ub = np.concatenate([-rows[win], rows[loss]])
        b_ub = np.concatenate([np.full(win.sum(), sign), np.full(loss.sum(), -sign)])
        res = linprog(np.zeros(p - 1), A_ub=a_ub if len(a_ub) else None,
                      b_ub=b_ub if len(a_ub) else None,
                      A_eq=rows[mixed] if mixed.any() else None,
                      b_eq=np.full(mixed.sum(), -sign) if mixed.any() else None,
                      bounds=[(None, None)] * (p - 1), method="highs")
        if res.status == 0:
            return True
    return False


def _profile_bound(j, sign, all_cells, cf, cs, rated, col, model, basis, theta, eta, ll,
                   threshold) -> float:
    """The rating t (Elo) at which j's profile deviance against the rated players reaches
    `threshold` (the module doc); -sign * inf when j met no rated player. Only j's games
    against rated players enter (with those of the fit); its games with other separated
    players are left out."""
    mine = ((cf == j) & rated[cs]) | ((cs == j) & rated[cf])
    if not mine.any():
        return -sign * math.inf
    own = all_cells.take(mine)
    j_first = cf[mine] == j
    dump = model.k
    own.f[j_first] = dump
    own.s[~j_first] = dump
    sign_off = np.where(j_first, 1.0, -1.0)
    cells = _Cells.concat(model.c, own)
    n_fit = len(model.c.f)
    prof = _Model(cells, model.k, model.h_col, model.davidson)
    state = {"theta": theta, "eta": eta}

    def deviance(t: float) -> float:
        cells.offset[n_fit:] = sign_off * t * _C
        th, et, lp, _, _, _ = _newton(prof, basis, state["theta"], state["eta"], 100, 1e-9)
        state["theta"], state["eta"] = th, et
        return 2.0 * (ll - lp)

    opp = np.where(j_first, cs[mine], cf[mine])
    ref = np.append(theta, 0.0)[col[opp]] / _C
    start = float(ref.max() if sign > 0 else ref.min())
    # Bracket: deviance is monotone in t (large towards the wrong side, -> 0 beyond).
    near, far = start, start + sign * 200.0
    for _ in range(40):
        if deviance(near) >= threshold:
            break
        near -= sign * 200.0
    for _ in range(40):
        if deviance(far) <= threshold:
            break
        near, far = far, far + sign * 2.0 * abs(far - start)
    lo, hi = min(near, far), max(near, far)
    f_lo, f_hi = deviance(lo) - threshold, deviance(hi) - threshold
    if not (np.isfinite(f_lo) and np.isfinite(f_hi)) or f_lo * f_hi > 0:
        return -sign * math.inf  # no bracket found: claim no finite bound
    from scipy.optimize import brentq

    return float(brentq(lambda t: deviance(t) - threshold, lo, hi, xtol=1e-6))
