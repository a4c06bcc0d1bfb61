"""The game protocol: everything search, training, the arena and the networks know of a game.

A game is an `Env`: a hashable object of static configuration with pure functions over a
`State` pytree, in pgx's conventions (the names are pgx's; the code is ours):

    env.init(key) -> State                        a new game (key: who moves first, ...)
    env.step(state, action, key=None) -> State    one move of the side to move
    env.observe(state) -> float32[*observation_shape]
    env.num_actions, env.observation_shape, env.num_players == 2, env.id, env.version

and on every `State` (single game; batch it with `jax.vmap` at the call site):

    current_player     int32[]          player id (0 or 1) to move
    legal_action_mask  bool[A]          all True once the game is over (pgx), so a masked
                                        policy never divides by zero
    rewards            float32[2]       by player id, of the step that made this state
    terminated         bool[]           the game ended by its rules
    truncated          bool[]           the game was cut off (a move cap); it ends the game
                                        everywhere a terminal does

Semantics every env keeps (`games.api_check.check_env` tests them): stepping a finished game
returns it unchanged with zero rewards; an illegal action ends the game and the mover loses
(-1, the opponent +1); rewards are zero-sum.

Optional hooks, each with a default here that a game overrides when it has something better:

    num_symmetries, action_permutations, transform_state, transform_observation
        the symmetry group (D4 on square boards; the identity alone by default)
    candidate_weights(state) -> float32[A] in [0, 1]
        prior shaping for search: Gomoku's proximity mask (seed 000); ones by default
    forcing_moves(states, max_nodes) -> (win int32[B], allowed bool[B, A])
        a threat-space search at the root for play (Gomoku: VCF), over a batch; none by
        default
    leaf_proof(states, max_nodes) -> int8[B]
        a sound threat proof at the search's leaves (+1 won, -1 lost, 0 unknown for the
        side to move; Gomoku: VCF), over a batch; nothing proven by default
    pass_action            the pass action's index, or None
    max_game_length        plies a game can last at most (default: num_actions)
    move_number(state)     plies played so far, for move-number schedules (default: 0)
    default_openings()     start positions for fair matches, as action sequences
    synthetic_examples(key, num)  generated training positions (Gomoku's tactical examples)
    to_text / to_svg / action_to_text / from_moves   rendering and construction
    for_people()           the env that plays people (Gomoku: its opening rule); self
    host_masks(state)      (legal, forbidden) of a host state, for the web UI: Gomoku's
                           renju marks black's forbidden points; the legal mask by default
    forbidden_note         what a forbidden cell is, in words

and on the `GameSpec`, class attributes the layers above read instead of tables by game id
(the default agent and evaluator, which fields a person chooses in the web UI and how they
are presented: `playable`, `traced`, `title`, `field_info`).
"""

from __future__ import annotations

import abc
import dataclasses
import functools
from typing import Any, ClassVar, Mapping, NamedTuple, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax import configs

State = Any  # a game's own pytree with the fields listed in the module docstring


class Examples(NamedTuple):
    """Training positions a game generates itself (leaves with a leading [num] axis).

    state: the positions; policy float32[num, A] the policy target (sums to 1 over legal
    moves); value float32[num] the outcome for the side to move; value_weight float32[num]
    1 where `value` is known; weight float32[num] 0 for an example that failed to build.
    """

    state: State
    policy: jax.Array
    value: jax.Array
    value_weight: jax.Array
    weight: jax.Array


@dataclasses.dataclass(frozen=True)
class FieldInfo:
    """How the web UI presents one of a spec's `playable` fields (`GameSpec.field_info`);
    every part is optional. The control's kind, bounds and default come from the field
    itself: an int or float field is a number input within its `Annotated[..., Bounds(low,
    high)]`, a str field with `choices` a selector, any other str field a text input.

    label: the control's label (default: the field's name, "board_size" -> "Board size").
    note: one line for people under the control.
    step: a number input's step (default: 1 for an int, any value for a float).
    choices: a str field's values in the order offered, each with a one-line note
      ({value: note}); the spec's own validation still decides what it accepts.
    """

    label: Optional[str] = None
    note: Optional[str] = None
    step: Optional[float] = None
    choices: Optional[Mapping[str, str]] = None


@dataclasses.dataclass(frozen=True)
class GameSpec:
    """A game's static, JSON-serialisable configuration; `games.from_spec(spec)` builds the
    env. Subclasses are frozen dataclasses with a class attribute `id` (the name the game is
    registered under in `games.registry`); the id and `dataclasses.asdict(spec)` rebuild the
    same env, which is how training configs and checkpoints name their game. Fields are
    checked against their annotations (`configs.validate`); a subclass's `__post_init__`
    calls this one, then checks what types can't say.

    The class attributes below are the game's defaults for the layers above it (what a
    layer asks of any game instead of keeping a table by game id); a game overrides those
    it has something better for. They are class attributes, not fields: no config holds
    them.
    """

    id = "game"
    """The name the game is registered under (`games.GAMES`, `games.make(id)`)."""

    preferred_evaluator: ClassVar[str] = "rollout"
    """The evaluator an agent's `evaluator="auto"` means in this game (an
    `agents.evaluator_registry.EVALUATORS` name; Gomoku: its heuristic)."""

    default_agent: ClassVar[str] = "mcts"
    """The agent spec that plays this game by default (pbrain, the web UI, tactics) where the
    shipped network does not (`players.default_agent_spec`)."""

    playable: ClassVar[Optional[tuple[str, ...]]] = None
    """The spec fields a person chooses in the web UI (the rest, e.g. Gomoku's observation
    planes, are the network's or the defaults): two specs that agree on them are the same
    game for a person. None: the web UI does not offer the game."""

    title: ClassVar[Optional[str]] = None
    """The game's name for people (the web UI's game selector); None: its `id`."""

    field_info: ClassVar[Mapping[str, FieldInfo]] = {}
    """How the web UI presents `playable` fields, by field name (`FieldInfo`: a label, a
    note, a number's step, a str field's choices with their notes). Default: none, so each
    field gets a label from its name and the control of its type and `Bounds`. A bound that
    depends on another field (Gomoku's win_length <= board_size) stays with the spec's own
    validation, whose ValueError the web UI reports."""

    traced: ClassVar[tuple[str, ...]] = ()
    """Spec fields that are leaves of the game's state (set on a game's initial state), not
    part of its compiled program: one compiled web-UI seat serves every value (Faux Go's
    komi)."""

    references: ClassVar[tuple[str, ...]] = ("random", "pure_mcts:num_simulations=64")
    """The fixed agent specs `compare --no-ladder` rates a comparison's runs against."""

    ladder: ClassVar[tuple[str, ...]] = (
        "random", *(f"pure_mcts:num_simulations={n}" for n in (16, 32, 64, 128, 256, 512,
                                                               1024)))
    """The candidate rungs of `compare`'s reference ladder (`compare.ladder`), weakest first
    as far as known (the calibration sorts them by their games; the first is rated 0).
    Candidates are calibrated only as the checkpoints climb, so strong, slow ones at the end
    cost nothing until a checkpoint reaches them."""

    def __post_init__(self):
        configs.validate(self, "game")


class Env(abc.ABC):
    """Base class of every game: the required protocol as abstract members, the optional
    hooks with their defaults. `Spec` is the game's `GameSpec` class; an env is built from
    one (`Env(spec)`). Envs with equal specs compare equal and hash alike, so an env can be a
    static argument of `jit` and a field of a frozen agent config.
    """

    Spec: type[GameSpec] = GameSpec
    num_players = 2

    def __init__(self, spec: GameSpec):
        if not isinstance(spec, self.Spec):
            raise ValueError(f"{type(self).__name__} needs a {self.Spec.__name__}, got {spec!r}")
        self.spec = spec

    @classmethod
    def from_spec(cls, spec: GameSpec) -> "Env":
        """The env of `spec` (subclasses whose `__init__` takes other arguments keep this)."""
        env = cls.__new__(cls)
        Env.__init__(env, spec)
        return env

    # ------------------------------------------------------------------ identity

    @property
    @abc.abstractmethod
    def id(self) -> str:
        """The game's name in the registry (`games.make(env.id, ...)`)."""

    @property
    @abc.abstractmethod
    def version(self) -> str:
        """Changes whenever the rules or the observation change (checkpoints record it)."""

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.spec == self.spec

    def __hash__(self) -> int:
        return hash((type(self), self.spec))

    def __repr__(self) -> str:
        fields = ", ".join(f"{f.name}={getattr(self.spec, f.name)!r}"
                           for f in dataclasses.fields(self.spec))
        return f"{type(self).__name__}({fields})"

    def describe(self) -> dict:
        """JSON-ready: id, version and the spec's fields."""
        return {"id": self.id, "version": self.version, **dataclasses.asdict(self.spec)}

    # ------------------------------------------------------------------ the protocol

    @property
    @abc.abstractmethod
    def num_actions(self) -> int:
        """A: actions are int32 in [0, A)."""

    @property
    @abc.abstractmethod
    def observation_shape(self) -> tuple[int, ...]:
        """The shape of `observe(state)` for one state."""

    @abc.abstractmethod
    def init(self, key: jax.Array) -> State:
        """A new game."""

    @abc.abstractmethod
    def step(self, state: State, action: jax.Array, key: Optional[jax.Array] = None) -> State:
        """One move of the side to move (`action` int32[]); see the module docstring for the
        semantics of finished games and illegal actions."""

    @abc.abstractmethod
    def observe(self, state: State) -> jax.Array:
        """float32[*observation_shape]: the network's input, from the side to move's view
        or absolute, as the game documents."""

    # ------------------------------------------------------------------ optional hooks

    @property
    def num_symmetries(self) -> int:
        """G, the size of the symmetry group (1: only the identity)."""
        return 1

    @property
    def action_permutations(self) -> np.ndarray:
        """int32[G, A]: `perm[g][a]` is the action whose value lands on action `a` under g,
        so a policy maps as `policy[perm[g]]` (a gather). Row 0 is the identity."""
        return np.arange(self.num_actions, dtype=np.int32)[None]

    def transform_state(self, state: State, g: jax.Array) -> State:
        """A single state under symmetry g (int32[], may be traced): the position that is
        the image of `state`, so that `observe` and the legal mask move with the actions."""
        del g
        return state

    def transform_observation(self, obs: jax.Array, g: jax.Array) -> jax.Array:
        """A single observation under g: equals `observe(transform_state(state, g))`."""
        del g
        return obs

    def candidate_weights(self, state: State) -> jax.Array:
        """float32[A] in [0, 1]: how plausible each move is before any search, for the
        search's prior shaping (soft: multiply the prior; hard: drop moves under a
        threshold). Ones by default, which makes shaping a no-op."""
        return jnp.ones((self.num_actions,), jnp.float32)

    def forcing_moves(self, states: State, max_nodes: int) -> tuple[jax.Array, jax.Array]:
        """A threat-space search at the root, for play (Gomoku: VCF, `vcf.py`): (win
        int32[B], a move that forces a win, -1 if none; allowed bool[B, A], the moves worth
        searching, e.g. only those that refute the opponent's forced win). Unlike the other
        hooks it takes a batch (leaves [B, ...]), so that a game can skip costly work no
        board needs with one `lax.cond`. `max_nodes`: the search's node budget (static).
        Default: (-1, the legal moves), no threat search."""
        del max_nodes
        mask = states.legal_action_mask
        return jnp.full(mask.shape[:1], -1, jnp.int32), mask

    def leaf_proof(self, states: State, max_nodes: int) -> jax.Array:
        """A threat proof inside the search (MCTS-Solver's leaf check, `search.base`'s
        `proof_nodes`): int8[B], +1 where the side to move wins by force, -1 where it loses
        by force, 0 where nothing is proven (and on a finished game). Only sound proofs: a
        wrong +-1 is an exact value the search never revisits. Takes a batch (leaves
        [B, ...]), as `forcing_moves`; `max_nodes`: the proof's node budget (static).
        Default: nothing proven (the game's end proves what it does)."""
        del max_nodes
        return jnp.zeros(states.legal_action_mask.shape[:1], jnp.int8)

    @property
    def pass_action(self) -> Optional[int]:
        """The pass action, for games that have one (it is the last action); else None."""
        return None

    @property
    def max_game_length(self) -> int:
        """The most plies a game can last (self-play keeps a game's positions until it ends).
        Default: `num_actions`, right for games where every move fills a cell."""
        return self.num_actions

    def move_number(self, state: State) -> jax.Array:
        """int32[]: plies played so far (for move-number schedules such as temperature
        decay). Default: 0, which keeps such schedules at their first value."""
        del state
        return jnp.int32(0)

    def default_openings(self) -> tuple[tuple[int, ...], ...]:
        """Start positions for fair matches, each an action sequence from `init`; all of the
        same length. Default: the initial position alone."""
        return ((),)

    def synthetic_examples(self, key: jax.Array, num: int) -> Examples:
        """`num` generated training examples (jittable; `num` static). Games without a
        generator raise ValueError."""
        raise ValueError(f"game {self.id!r} has no synthetic training examples")

    @property
    def has_synthetic_examples(self) -> bool:
        return type(self).synthetic_examples is not Env.synthetic_examples

    def action_to_text(self, action: int) -> str:
        """A human-readable action (default: its index)."""
        return str(int(action))

    def to_text(self, state: State) -> str:
        """A text picture of one state (default: the legal actions and the outcome)."""
        legal = np.flatnonzero(np.asarray(state.legal_action_mask))
        return (f"{type(self).__name__} state: player {int(state.current_player)} to move, "
                f"terminated={bool(state.terminated)}, truncated={bool(state.truncated)}, "
                f"legal actions {legal.tolist()}")

    def to_svg(self, state: State, **kwargs) -> Optional[str]:
        """An SVG picture of one state, or None when the game has no SVG renderer."""
        return None

    # ------------------------------------------------------------------ play with people

    def for_people(self) -> "Env":
        """The env that plays people (the web UI): the same game (the same spec, rules and
        observation) with whatever hooks suit play against a person, e.g. Gomoku's
        `OpeningGomoku`, whose search prior follows the engines' opening rule (the centre on
        the empty board, then near the stones). Calling it on its result returns an equal
        env. Default: `self`."""
        return self

    def host_masks(self, state: State) -> tuple[np.ndarray, np.ndarray]:
        """(legal, forbidden), NumPy bool[A] each, of one host (NumPy) `state`, for the
        programs that play people (the web UI, once per position, outside `jit`): `legal`
        equals `state.legal_action_mask`; `forbidden` marks the cells that mask leaves out
        by a rule a person should see (Gomoku under renju: black's forbidden points, with
        black to move and the game on), drawn on the board and named in a refused move's
        message (`forbidden_note`). A game whose mask is costly to read from a host state
        computes both here with compiled code. Default: the state's mask, nothing
        forbidden."""
        legal = np.asarray(state.legal_action_mask, bool)
        return legal, np.zeros_like(legal)

    @property
    def forbidden_note(self) -> str:
        """What a cell of `host_masks`'s `forbidden` is, as a noun phrase for people ("<move>
        is <note>"); Gomoku under renju names the rule. Default: a generic phrase."""
        return "a move the rules forbid here"

    def from_moves(self, moves: Sequence[int], key: Optional[jax.Array] = None) -> State:
        """The state after playing `moves` (actions) from `init(key)`, checked on the host:
        ValueError for an action out of range, an illegal move, or a move after the end."""
        state = self.init(jax.random.key(0) if key is None else key)
        step = _jitted_step(self)
        for i, action in enumerate(moves):
            if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
                raise ValueError(f"move {i}: expected an int action, got {action!r}")
            if bool(state.terminated | state.truncated):
                raise ValueError(f"move {i}: the game is already over")
            if not 0 <= action < self.num_actions:
                raise ValueError(f"move {i}: action {action} is out of range "
                                 f"(0..{self.num_actions - 1})")
            if not bool(state.legal_action_mask[action]):
                raise ValueError(f"move {i}: action {self.action_to_text(action)} is illegal")
            state = step(state, jnp.int32(action))
        return state


@functools.lru_cache(maxsize=64)
def _jitted_step(env: Env):
    return jax.jit(env.step)


def is_over(state: State) -> jax.Array:
    """bool[...]: the game has ended, by its rules or by truncation."""
    return state.terminated | state.truncated


def reward_of(state: State, player: jax.Array) -> jax.Array:
    """float32[...]: `state.rewards[player]` for any batch shape."""
    return jnp.take_along_axis(state.rewards, jnp.asarray(player)[..., None], axis=-1)[..., 0]
