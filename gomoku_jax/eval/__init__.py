"""Evaluation: playing agents against each other on device."""

from gomoku_jax.eval.match import play_match

__all__ = ["play_match"]
