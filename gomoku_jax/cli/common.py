"""What the command lines share: the game flags, openings files, and loading a trained
network with `--checkpoint`."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Optional

from gomoku_jax import games
from gomoku_jax.games.gomoku import openings as gomoku_openings
from gomoku_jax.games.gomoku.config import RULES
from gomoku_jax.games.protocol import Env

GOMOKU_FLAGS = ("board_size", "win_length", "rule")


def add_game_arguments(parser: argparse.ArgumentParser, board_size: int = 15) -> None:
    """The flags shared by arena and tournament: the game, openings, seed and a trained
    network (--checkpoint, --step). The Gomoku flags default to None, which `setup_game`
    reads as the checkpoint's game, else as board_size / 5 / freestyle."""
    parser.add_argument("--game", default=None,
                        help="the game: gomoku (default), fauxgo, or a pgx env as pgx/<id>, "
                             "e.g. pgx/connect_four (default with --checkpoint: its game)")
    parser.add_argument("--board-size", type=int,
                        help=f"gomoku and fauxgo: board N (default {board_size} for gomoku, "
                             f"the game's own for fauxgo, or the checkpoint's)")
    parser.add_argument("--win-length", type=int,
                        help="gomoku: k (default 5, or the checkpoint's)")
    parser.add_argument("--rule", choices=RULES,
                        help="gomoku: the rule (default freestyle, or the checkpoint's)")
    parser.set_defaults(game_defaults={"board_size": board_size, "win_length": 5,
                                       "rule": "freestyle"})
    parser.add_argument("--openings", metavar="FILE",
                        help="openings file (default: the game's own openings; gomoku: the 8 "
                             "built-in 3-stone openings). Gomoku: one move list per line of "
                             "(row, col) offsets from the centre, or JSON; other games: one "
                             "opening per line of actions")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint", metavar="PATH",
                        help="a trained network: a run directory of `gomoku-jax train`, its "
                             "checkpoints/ directory or checkpoints/<step>. Agent specs "
                             "'trained[:num_simulations=S]' (the run's eval agent) and "
                             "'mcts|gumbel|policy:evaluator=network,...' then play with it, on "
                             "its game (a GMO run of `train --algo gmo`: 'gmo[:beta=...]' and "
                             "'trained' play with its params)")
    parser.add_argument("--step", type=int, metavar="N",
                        help="the checkpoint step to load (default: the latest)")


def needs_network(specs) -> bool:
    """Whether an agent spec plays with a network: `trained...` or `evaluator=network`."""
    return any(spec.split(":")[0].strip() == "trained" or "evaluator=network" in spec
               for spec in specs)


def load_network(args: argparse.Namespace, specs=()):
    """The `players.Player` of --checkpoint / --step; without a checkpoint, the shipped
    network when one of `specs` needs a network (`needs_network`), else None; SystemExit on
    a bad path."""
    from gomoku_jax.players import load_for_cli

    return load_for_cli(getattr(args, "checkpoint", None), getattr(args, "step", None),
                        default=needs_network(specs))


def load_openings(env: Env, path: str) -> tuple[tuple[int, ...], ...]:
    """Openings from a file, as action sequences for `env` (see `--openings`)."""
    if env.id == "gomoku":
        return gomoku_openings.opening_actions(gomoku_openings.load_openings(path),
                                               env.board_size)
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise ValueError(f"cannot read openings file {path}: {e}") from None
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not valid JSON: {e}") from None
    else:
        data = []
        for n, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].replace(",", " ").strip()
            if line:
                try:
                    data.append([int(t) for t in line.split()])
                except ValueError:
                    raise ValueError(f"{path}, line {n}: expected actions (integers), got "
                                     f"{line!r}") from None
    if not isinstance(data, list) or not data or not all(
            isinstance(o, list) and all(isinstance(a, int) for a in o) for o in data):
        raise ValueError(f"{path}: expected one or more openings, each a list of actions")
    return tuple(tuple(o) for o in data)


def setup_game(args: argparse.Namespace, network=None) -> tuple[Env, Optional[tuple]]:
    """(env, openings or None for the game's own) from the flags of `add_game_arguments`;
    SystemExit on bad values.

    With `network` (a `players.Player`), the env is the network's game and game flags that
    were given must match it."""
    given = {k: getattr(args, k, None) for k in GOMOKU_FLAGS}
    game = getattr(args, "game", None)
    try:
        if network is not None:
            env = network.env
            if game is not None and game != env.id:
                raise ValueError(f"--game {game} doesn't match the checkpoint's game {env.id}")
            wrong = [f"--{k.replace('_', '-')} {v}" for k, v in given.items()
                     if v is not None and v != getattr(network.game_spec, k, None)]
            if wrong:
                raise ValueError(
                    f"{', '.join(wrong)} doesn't match the checkpoint's game ({env!r}); a "
                    f"network plays only the game it was trained on: leave these flags out")
        elif (game or "gomoku") == "gomoku":
            defaults = getattr(args, "game_defaults", None) or {
                "board_size": 15, "win_length": 5, "rule": "freestyle"}
            env = games.make("gomoku", **{k: defaults[k] if v is None else v
                                          for k, v in given.items()})
        else:
            spec = games.spec_class("pgx" if game.startswith("pgx/") else game)
            fields = {f.name for f in dataclasses.fields(spec)}
            extra = [f"--{k.replace('_', '-')}" for k, v in given.items()
                     if v is not None and k not in fields]
            if extra:
                raise ValueError(f"{', '.join(extra)} is not an option of the game {game}")
            env = games.make(game, **{k: v for k, v in given.items() if v is not None})
        openings = load_openings(env, args.openings) if args.openings else None
        if openings is not None:
            from gomoku_jax.eval.arena import opening_states

            opening_states(env, openings)  # validate on this game now
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    return env, openings
