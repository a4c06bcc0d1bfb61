"""Renju's forbidden points on the host, for pbrain and the other programs of `io`: the
functions of `games.gomoku.forbidden` (the game's own, which its env's `host_masks` uses for
the web UI), kept here under their old names."""

from __future__ import annotations

from gomoku_jax.games.gomoku.forbidden import forbidden_for_black, renju_cells, warm

__all__ = ["forbidden_for_black", "renju_cells", "warm"]
