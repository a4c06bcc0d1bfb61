"""A game as the web UI's JSON (docs/play.md has the schema).

Board games of the platform share the state fields read here: `board` int8[N, N] (+1
black, -1 white, 0 empty), `color` int8[] (the colour to move), `winner` int8[] (+1, -1,
0), `terminated`, `truncated`, `legal_action_mask` bool[A] (or the caller's masks, the
env's `host_masks`, with e.g. renju's forbidden points: `Seat.masks`), `last_action` int32[];
Faux Go's states add `owner` int8[N, N] and `captures` int32[2], and its env `scores`
(which the caller passes compiled).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, NamedTuple, Optional

import numpy as np

from gomoku_jax.games.protocol import Env

COLOUR_NAMES = {1: "black", -1: "white"}


class Move(NamedTuple):
    """One played move: `ply` from 1, the mover's colour, the action, its text, who."""

    ply: int
    colour: str
    action: int
    text: str
    by: str  # "human" or "ai"


@dataclasses.dataclass(frozen=True)
class AiInfo:
    """The AI's status and the analysis of its last move.

    status: "idle", "compiling", "thinking" or "error"; message: for the person, or None;
    value: the AI's estimate for itself in [-1, 1]; policy: float32[A] its move
    distribution over the position before its move; move_ms: that move's wall time;
    simulations: the search's simulations (None: not a search).
    """

    status: str = "idle"
    message: Optional[str] = None
    value: Optional[float] = None
    policy: Optional[np.ndarray] = None
    move_ms: Optional[float] = None
    simulations: Optional[int] = None


def policy_of(info: dict, action: int, num_actions: int) -> np.ndarray:
    """float32[A]: `info["policy"]` flattened and normalised, or one-hot on `action` when
    the agent gave none (e.g. a forced win found without a search)."""
    policy = info.get("policy")
    if policy is not None:
        p = np.asarray(policy, np.float32).reshape(-1)[:num_actions]
        total = float(p.sum())
        if p.size == num_actions and np.isfinite(total) and total > 0:
            return p / total
    p = np.zeros(num_actions, np.float32)
    if 0 <= action < num_actions:
        p[action] = 1.0
    return p


def _rounded(values: np.ndarray) -> list:
    return [round(float(v), 4) for v in values]


def result_text(winner: int, human: int) -> str:
    if winner == 0:
        return "Draw"
    who = "you" if winner == human else "AI"
    return f"{COLOUR_NAMES[winner].capitalize()} ({who}) wins"


def game_view(game_id: str, env: Env, state: Any, human: int, moves: list, ai: AiInfo,
              agent: str, *, your_turn: bool, config: Optional[dict] = None,
              scores: Optional[Callable] = None,
              masks: Optional[tuple[np.ndarray, np.ndarray]] = None) -> dict:
    """The JSON-ready view of one game (host state): `config` the game's config (default
    the env's), `scores` the compiled `env.scores` (None: the game has no scores), `masks`
    (legal, forbidden) bool[A] each (default: the state's legal mask, nothing forbidden)."""
    board = np.asarray(state.board)
    over = bool(state.terminated) or bool(state.truncated)
    if masks is None:
        legal = np.asarray(state.legal_action_mask)
        masks = (legal, np.zeros_like(legal))
    legal, forbidden = (np.asarray(m, bool) for m in masks)
    winner = int(state.winner)
    config = dataclasses.asdict(env.config) if config is None else config
    view = {
        "id": game_id,
        "game": env.id,
        "config": {k: v for k, v in config.items() if isinstance(v, (int, float, str))},
        "board_size": int(board.shape[-1]),
        "num_actions": int(env.num_actions),
        "pass_action": env.pass_action,
        "board": board.astype(int).tolist(),
        "owner": np.asarray(state.owner).astype(int).tolist() if hasattr(state, "owner")
        else None,
        "scores": None,
        "captures": None,
        "human": COLOUR_NAMES[human],
        "to_move": COLOUR_NAMES[int(state.color)],
        "your_turn": your_turn,
        "legal": (legal & (not over)).tolist(),
        "forbidden": (forbidden & (not over)).tolist(),
        "forbidden_note": env.forbidden_note,
        "last_action": int(state.last_action),
        "moves": [m._asdict() for m in moves],
        "over": over,
        "winner": ({1: "black", -1: "white", 0: "draw"}[winner] if over else None),
        "result": result_text(winner, human) if over else None,
        "ai": {
            "agent": agent, "colour": COLOUR_NAMES[-human], "status": ai.status,
            "message": ai.message, "value": ai.value,
            "policy": None if ai.policy is None else _rounded(ai.policy),
            "move_ms": None if ai.move_ms is None else round(ai.move_ms, 1),
            "simulations": ai.simulations,
        },
    }
    if scores is not None:
        black, white = (float(x) for x in np.asarray(scores(state)))
        view["scores"] = {"black": black, "white": white}
    if hasattr(state, "captures"):
        black, white = (int(x) for x in np.asarray(state.captures))
        view["captures"] = {"black": black, "white": white}
    return view
