"""Evaluation: agents against each other on device, openings, Elo, tournaments, and the
tactical suite labelled by an exact threat solver."""

from gomoku_jax.eval.arena import MatchResult, Record, run_match
from gomoku_jax.eval.elo import EloEstimate, elo_diff, estimate, expected_score, fit_ratings
from gomoku_jax.eval.match import play_match
from gomoku_jax.eval.openings import DEFAULT_OPENINGS, load_openings, opening_states
from gomoku_jax.eval.solver import Solver
from gomoku_jax.eval.specs import make_agent, parse_spec, split_specs
from gomoku_jax.eval.tactics import CATEGORIES, Puzzle, Suite, default_suite, solve_rates
from gomoku_jax.eval.tournament import TournamentResult, run_tournament

__all__ = ["CATEGORIES", "Puzzle", "Solver", "Suite", "default_suite", "solve_rates",
           "DEFAULT_OPENINGS", "EloEstimate", "MatchResult", "Record", "TournamentResult",
           "elo_diff", "estimate", "expected_score", "fit_ratings", "load_openings",
           "make_agent", "opening_states", "parse_spec", "play_match", "run_match",
           "run_tournament", "split_specs"]
