"""Evaluation for any game: agents against each other on device, Elo, round-robin
tournaments, and solve rates on puzzles."""

from gomoku_jax.eval.arena import MatchResult, Record, opening_states, run_match
from gomoku_jax.eval.elo import EloEstimate, elo_diff, estimate, expected_score, fit_ratings
from gomoku_jax.eval.match import MatchOutcome, play_match
from gomoku_jax.eval.puzzles import SolveResult, solve_rates
from gomoku_jax.eval.tournament import TournamentResult, run_tournament

__all__ = ["EloEstimate", "MatchOutcome", "MatchResult", "Record", "SolveResult",
           "TournamentResult", "elo_diff", "estimate", "expected_score", "fit_ratings",
           "opening_states", "play_match", "run_match", "run_tournament", "solve_rates"]
