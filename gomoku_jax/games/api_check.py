"""The checks every env passes: `check_env(env)` raises AssertionError saying what is wrong.

A game author runs it on a new env (the test suite runs it on every registered game):

    from gomoku_jax.games.api_check import check_env
    check_env(gomoku_jax.make("pgx/connect_four"))

What it checks, on a batch of random games played under `jit` and `vmap`:
- the protocol's attributes, and the dtypes and shapes of the state fields and `observe`;
- during play: rewards zero-sum, nonzero only on the step that ends a game and in [-1, 1];
  a live state has a legal move; a finished state's legal mask is all True; every game ends
  within `max_game_length` plies; `move_number` counts plies (or stays 0, the default);
- stepping a finished state changes nothing and gives zero rewards;
- an illegal action (a masked one, and one outside [0, A)) ends the game, the mover -1;
- `auto_reset` starts a fresh game after the end and reports the finished one's outcome;
- the symmetry group: permutation tables with the identity first, inverses in the group,
  states, observations and legal masks that move together, and round trips back;
- `candidate_weights` in [0, 1]; `default_openings` of one length that leave a live game;
  `from_moves` equal to stepping.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax.games.auto_reset import auto_reset
from gomoku_jax.games.protocol import Env, is_over
from gomoku_jax.games.random_play import random_legal_action


def _check(condition: Any, message: str) -> None:
    if not bool(np.all(condition)):
        raise AssertionError(message)


def _leaves_equal(a, b) -> bool:
    leaves_a, tree_a = jax.tree.flatten(a)
    leaves_b, tree_b = jax.tree.flatten(b)
    return tree_a == tree_b and all(np.array_equal(np.asarray(x), np.asarray(y))
                                    for x, y in zip(leaves_a, leaves_b))


def _index(tree, i):
    return jax.tree.map(lambda x: x[i], tree)


def _probe(env: Env, state, action, key):
    """The checks that step one state: an illegal masked action, -1 and A; the plain step;
    auto_reset's step, the fresh game it should give, and one more step after it."""
    reset_step = auto_reset(env.step, env.init)
    legal = state.legal_action_mask
    masked = jnp.argmin(legal)  # a masked action when there is one
    illegal = [env.step(state, a) for a in (masked, jnp.int32(-1), jnp.int32(env.num_actions))]
    after = reset_step(state, action, key)
    fresh = env.init(jax.random.split(key)[1])  # the key auto_reset hands init
    again = reset_step(after, random_legal_action(key, after.legal_action_mask), key)
    return illegal, ~jnp.all(legal), env.step(state, action), after, fresh, again


@functools.lru_cache(maxsize=None)
def _compiled(env: Env, batch: int):
    """Everything the checks read, in one jitted `key -> dict`: B random games of T =
    max_game_length plies (finished games keep being stepped, which must change nothing)
    with their observations, candidate weights and move numbers; the probes of `_probe`
    on every (ply, board); one position under every symmetry and back."""
    plies = env.max_game_length
    over_time = lambda f: jax.vmap(jax.vmap(f))  # noqa: E731
    inverses = jnp.asarray(_group_inverses(np.asarray(env.action_permutations)))

    def moved(state, g):
        image = env.transform_state(state, g)
        return (image, env.observe(image), env.transform_observation(env.observe(state), g),
                env.transform_state(image, inverses[g]))

    def run(key):
        k_init, k_play, k_probe = jax.random.split(key, 3)
        start = jax.vmap(env.init)(jax.random.split(k_init, batch))

        def body(states, k):
            actions = random_legal_action(k, states.legal_action_mask)
            after = jax.vmap(env.step)(states, actions)
            return after, (after, actions)

        _, (states, actions) = jax.lax.scan(body, start, jax.random.split(k_play, plies))
        states = jax.tree.map(lambda s, x: jnp.concatenate([s[None], x]), start, states)
        flat = lambda x: x[:plies].reshape((plies * batch,) + x.shape[2:])  # noqa: E731
        probes = jax.vmap(lambda s, a, k: _probe(env, s, a, k))(
            jax.tree.map(flat, states), actions.reshape(-1),
            jax.random.split(k_probe, plies * batch))
        sample = jax.tree.map(lambda x: x[min(4, plies), 0], states)
        symmetries = jax.vmap(moved, in_axes=(None, 0))(
            sample, jnp.arange(env.num_symmetries))
        return {"states": states, "actions": actions,
                "observations": over_time(env.observe)(states),
                "weights": over_time(env.candidate_weights)(states),
                "moves": over_time(env.move_number)(states),
                "probes": probes, "sample": sample, "symmetries": symmetries}

    return jax.jit(run)


def check_env(env: Env, key: jax.Array = None, batch: int = 16) -> None:
    """Run every check on `env` (see the module docstring); AssertionError on a failure."""
    key = jax.random.key(0) if key is None else key
    _check_attributes(env)
    _check_symmetry_table(env)
    out = jax.device_get(_compiled(env, batch)(key))
    states, actions = out["states"], out["actions"]
    _check_state_fields(env, _index(states, 0), out["observations"][0])
    _check_play(env, states, actions, out["moves"])
    _check_steps(env, states, out["probes"])
    _check_symmetries(env, out["sample"], out["symmetries"])
    _check_hooks(env, states, actions, out["weights"])


def _check_attributes(env: Env) -> None:
    _check(env.num_players == 2, f"num_players must be 2, got {env.num_players}")
    _check(isinstance(env.num_actions, int) and env.num_actions > 0,
           f"num_actions must be a positive int, got {env.num_actions!r}")
    shape = env.observation_shape
    _check(isinstance(shape, tuple) and all(isinstance(d, int) and d > 0 for d in shape),
           f"observation_shape must be a tuple of positive ints, got {shape!r}")
    _check(isinstance(env.id, str) and env.id and isinstance(env.version, str),
           f"id and version must be strings, got {env.id!r}, {env.version!r}")
    _check(isinstance(env.max_game_length, int) and env.max_game_length > 0,
           f"max_game_length must be a positive int, got {env.max_game_length!r}")
    _check(hash(env) == hash(type(env).from_spec(env.spec)) and env == type(env).from_spec(
        env.spec), "envs with equal specs must compare equal and hash alike")


def _check_state_fields(env: Env, states, obs) -> None:
    b, a = states.legal_action_mask.shape[0], env.num_actions
    want = {"current_player": ((b,), np.int32), "legal_action_mask": ((b, a), np.bool_),
            "rewards": ((b, 2), np.float32), "terminated": ((b,), np.bool_),
            "truncated": ((b,), np.bool_)}
    for name, (shape, dtype) in want.items():
        x = np.asarray(getattr(states, name))
        _check(x.shape == shape and x.dtype == dtype,
               f"state.{name} must be {np.dtype(dtype).name}{list(shape[1:])} per state, got "
               f"{x.dtype}{list(x.shape[1:])}")
    _check(np.isin(states.current_player, (0, 1)), "current_player must be 0 or 1")
    _check(~np.asarray(is_over(states)), "init must give a live game")
    obs = np.asarray(obs)
    _check(obs.shape == (b, *env.observation_shape) and obs.dtype == np.float32,
           f"observe must give float32{list(env.observation_shape)}, got "
           f"{obs.dtype}{list(obs.shape[1:])}")
    _check(np.isfinite(obs), "observations must be finite")


def _check_play(env: Env, states, actions, moves) -> None:
    over = np.asarray(is_over(states))  # [T+1, B]
    rewards = np.asarray(states.rewards)
    ended_now = over[1:] & ~over[:-1]
    _check(np.abs(rewards.sum(-1)) < 1e-6, "rewards must be zero-sum")
    _check(np.all(np.abs(rewards) <= 1.0), "rewards must be in [-1, 1]")
    _check(np.all(rewards[1:][~ended_now] == 0), "rewards must be zero except on the step "
                                                  "that ends the game")
    _check(np.all(rewards[0] == 0), "init must give zero rewards")
    _check(over[-1], f"every random game must end within max_game_length = "
                     f"{env.max_game_length} plies")
    legal = np.asarray(states.legal_action_mask)
    _check(np.all(legal[~over].any(-1)), "a live state must have a legal action")
    _check(np.all(legal[np.asarray(states.terminated)]), "a terminated state's legal mask "
                                                          "must be all True")
    _check(np.all(np.take_along_axis(legal[:-1], actions[..., None], -1)),
           "random_legal_action drew an illegal action")
    moves = np.asarray(moves)
    counted = np.cumsum(np.concatenate([np.zeros_like(over[:1]), ~over[:-1]]), axis=0)
    _check(np.all(moves == 0) or np.array_equal(moves, counted + moves[0]),
           "move_number must count the plies played (or be 0 throughout)")


def _check_steps(env: Env, states, probes) -> None:
    """Finished games, illegal actions and auto_reset, on every (ply, board) of the games."""
    over = np.asarray(is_over(states))
    t_count = over.shape[0] - 1
    before = jax.tree.map(lambda x: x[:t_count].reshape((-1,) + x.shape[2:]), states)
    illegal, has_masked, plain, after, fresh, again = probes
    live = ~over[:-1].reshape(-1)
    ended = live & np.asarray(is_over(plain))
    finished = ~live
    _check(np.all(np.asarray(plain.rewards)[finished] == 0),
           "stepping a finished game must give zero rewards")
    _check(_leaves_equal(_index(plain.replace(rewards=before.rewards), finished),
                         _index(before, finished)),
           "stepping a finished game must leave it unchanged")
    mover = np.asarray(before.current_player)
    rows = np.arange(len(mover))
    for name, outcome, where in (("a masked action", illegal[0], live & has_masked),
                                 ("action -1", illegal[1], live),
                                 ("action A", illegal[2], live)):
        r = np.asarray(outcome.rewards)
        _check(np.asarray(outcome.terminated)[where], f"{name} must end a live game")
        _check((r[rows, mover] == -1)[where] & (r[rows, 1 - mover] == 1)[where],
               f"{name}: the mover must get -1 and the opponent +1")
    _check(_leaves_equal(_index(after, live & ~ended), _index(plain, live & ~ended)),
           "auto_reset must not change a live game's step")
    _check(np.array_equal(np.asarray(after.rewards)[ended], np.asarray(plain.rewards)[ended])
           and np.array_equal(np.asarray(after.terminated)[ended],
                              np.asarray(plain.terminated)[ended])
           and np.array_equal(np.asarray(after.truncated)[ended],
                              np.asarray(plain.truncated)[ended]),
           "auto_reset must carry the finished game's rewards and end flags")
    flagged = fresh.replace(terminated=after.terminated, truncated=after.truncated,
                            rewards=after.rewards)
    _check(_leaves_equal(_index(after, ended), _index(flagged, ended)),
           "auto_reset must hand back a fresh game after the end")
    _check(~np.asarray(is_over(again))[ended], "the game after an auto-reset must go on, its "
                                               "end flags cleared")


def _group_inverses(table: np.ndarray) -> np.ndarray:
    """int[G]: for each element g, the element h with perm[g][perm[h]] = identity."""
    identity = np.arange(table.shape[1])
    out = []
    for g in range(table.shape[0]):
        hs = [h for h in range(table.shape[0]) if np.array_equal(table[g][table[h]], identity)]
        _check(len(hs) == 1, f"symmetry {g} has no inverse in the group")
        out.append(hs[0])
    return np.asarray(out)


def _check_symmetry_table(env: Env) -> None:
    table = np.asarray(env.action_permutations)
    g_count = env.num_symmetries
    _check(table.shape == (g_count, env.num_actions) and table.dtype == np.int32,
           f"action_permutations must be int32[{g_count}, {env.num_actions}], got "
           f"{table.dtype}{list(table.shape)}")
    _check(np.all(np.sort(table, axis=1) == np.arange(env.num_actions)),
           "every row of action_permutations must be a permutation")
    _check(np.array_equal(table[0], np.arange(env.num_actions)), "element 0 must be the "
                                                                  "identity")
    _group_inverses(table)
    if env.pass_action is not None:
        _check(np.all(table[:, env.pass_action] == env.pass_action),
               "symmetries must fix the pass action")


def _check_symmetries(env: Env, sample, symmetries) -> None:
    table = np.asarray(env.action_permutations)
    image, obs_of_image, image_of_obs, back = symmetries
    for g in range(env.num_symmetries):
        _check(np.allclose(obs_of_image[g], image_of_obs[g]),
               f"symmetry {g}: observe(transform_state(s)) != transform_observation(observe(s))")
        _check(np.array_equal(np.asarray(image.legal_action_mask)[g],
                              np.asarray(sample.legal_action_mask)[table[g]]),
               f"symmetry {g}: the legal mask must move with the actions")
        _check(_leaves_equal(_index(back, g), sample),
               f"symmetry {g} then its inverse must give the state back")


def _check_hooks(env: Env, states, actions, weights) -> None:
    weights = np.asarray(weights)
    _check(weights.shape == np.asarray(states.legal_action_mask).shape
           and weights.dtype == np.float32,
           f"candidate_weights must be float32[{env.num_actions}]")
    _check((weights >= 0) & (weights <= 1), "candidate_weights must be in [0, 1]")
    openings = env.default_openings()
    _check(len(openings) >= 1 and len({len(o) for o in openings}) == 1,
           "default_openings must be one or more action sequences of one length")
    for opening in openings:
        _check(not bool(is_over(env.from_moves(list(opening)))),
               f"opening {opening} must leave a live game")
    # from_moves: the first game's first few moves give the position they led to.
    over = np.asarray(is_over(states))[:, 0]
    plies = min(4, int(np.argmax(over)) if over.any() else len(over) - 1)
    moves = [int(a) for a in np.asarray(actions)[:plies, 0]]
    built = env.from_moves(moves)
    reached = _index(_index(states, plies), 0)
    _check(np.array_equal(np.asarray(built.legal_action_mask),
                          np.asarray(reached.legal_action_mask))
           and bool(is_over(built)) == bool(is_over(reached)),
           "from_moves must give the position the moves lead to")
