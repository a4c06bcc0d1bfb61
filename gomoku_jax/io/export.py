"""A trained network as serialized StableHLO (`jax.export`), runnable with jax alone, or as
an ONNX model (`--format onnx`, see `gomoku_jax.io.export_onnx`).

    gomoku-jax export --checkpoint runs/quick --out quick.jaxexport
    gomoku-jax export --checkpoint runs/quick/checkpoints/40 --out q40.jaxexport \\
        --platforms cpu,cuda
    gomoku-jax export --checkpoint runs/quick --out quick.onnx --format onnx

writes two files:

    OUT        `jax.export.Exported.serialize()` of the inference function
                 obs float32[b, *obs_shape] -> (logits float32[b, A], value float32[b])
               with a symbolic batch size b (any b >= 1) and the network's parameters and
               BatchNorm statistics baked in as constants (for Gomoku obs_shape is
               [N, N, C] and A = N*N);
    OUT.json   what a player needs to know (`metadata`): the game (its id, version and
               config), the input shape and, for Gomoku, the meaning of each plane, the
               outputs, the net config, the run and step, the platforms; "model_format"
               says which format OUT is ("stablehlo" here, "onnx" for `--format onnx`).

Running it needs jax only (no flax, no gomoku_jax):

    import jax, numpy as np
    exported = jax.export.deserialize(bytearray(open("quick.jaxexport", "rb").read()))
    logits, value = exported.call(obs)       # obs: np.float32[b, *obs_shape]

or `load_exported(path)` from here. The input is `env.observe(state)` of the run's game;
logits are unmasked (mask the illegal actions before taking a move; Gomoku: action =
row * N + col); value is the side to move's expected result in [-1, 1].

The lowering targets the current backend by default; `--platforms cpu,cuda` makes one file
for several (a platform need not be present to be lowered for).
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any, Callable, Optional, Sequence

import jax
import jax.numpy as jnp

FORMAT = "gomoku_jax.export"
# The metadata's version. 3: "model_format" ("stablehlo" | "onnx") names the file's format;
# "platforms" and "calling_convention_version" are StableHLO's, an ONNX export has "onnx".
FORMAT_VERSION = 3
MODEL_FORMATS = ("stablehlo", "onnx")
METADATA_SUFFIX = ".json"
PLATFORMS = ("cpu", "cuda", "rocm", "tpu")


def metadata_path(path: str | pathlib.Path) -> pathlib.Path:
    """Where the metadata of the export at `path` lives: `path` + ".json"."""
    path = pathlib.Path(path)
    return path.with_name(path.name + METADATA_SUFFIX)


def parse_platforms(text: Optional[str | Sequence[str]]) -> tuple[str, ...]:
    """Lowering platforms from "cpu,cuda" (or a sequence); None or empty: the current
    backend's (`jax.export.default_export_platform()`, e.g. "cuda" on an NVIDIA GPU).

    Raises:
      ValueError: an unknown or repeated platform.
    """
    if text is None:
        return (jax.export.default_export_platform(),)
    items = text.split(",") if isinstance(text, str) else list(text)
    platforms = tuple(p.strip().lower() for p in items if p.strip())
    if not platforms:
        return (jax.export.default_export_platform(),)
    unknown = [p for p in platforms if p not in PLATFORMS]
    if unknown:
        hint = " (NVIDIA GPUs are 'cuda')" if "gpu" in unknown else ""
        raise ValueError(f"unknown platform(s) {unknown}{hint}; choose from {list(PLATFORMS)}")
    if len(set(platforms)) != len(platforms):
        raise ValueError(f"platforms given twice in {list(platforms)}")
    return platforms


def parse_model_format(name: Optional[str]) -> str:
    """"stablehlo" (also for None) or "onnx".

    Raises:
      ValueError: any other name.
    """
    if name is None:
        return MODEL_FORMATS[0]
    if name not in MODEL_FORMATS:
        raise ValueError(f"unknown export format {name!r}; choose from {list(MODEL_FORMATS)}")
    return name


def inference_function(apply: Callable[[Any, jax.Array], tuple[jax.Array, jax.Array]],
                       variables: Any) -> Callable[[jax.Array], tuple[jax.Array, jax.Array]]:
    """`obs float32[B, *obs_shape] -> (logits float32[B, A], value float32[B])`, the function
    every export format writes: `apply(variables, obs)` with `variables` closed over (they
    become constants of the export), outputs cast to float32 and the value flattened."""

    def forward(obs):
        logits, value = apply(variables, obs)
        return logits.astype(jnp.float32), value.reshape(-1).astype(jnp.float32)

    return forward


def export_apply(apply: Callable[[Any, jax.Array], tuple[jax.Array, jax.Array]],
                 variables: Any, observation_shape: Sequence[int],
                 platforms: Optional[Sequence[str]] = None) -> jax.export.Exported:
    """`obs -> apply(variables, obs)` exported with `variables` as constants.

    Args:
      apply: `(variables, obs float32[B, *observation_shape]) -> (logits [B, A], value [B])`.
      observation_shape: one observation's shape; the batch dimension is symbolic ("b").
      platforms: lowering platforms (default: the current backend's).
    Returns:
      The `jax.export.Exported` (`.serialize()` gives the bytes).
    """
    platforms = parse_platforms(platforms)
    dims = ", ".join(["b", *(str(d) for d in observation_shape)])
    spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape(dims), jnp.float32)
    forward = inference_function(apply, variables)
    return jax.export.export(jax.jit(forward), platforms=platforms)(spec)


def _planes(env) -> Optional[list[str]]:
    """What each input plane means, for the games that say (Gomoku)."""
    if env.id != "gomoku":
        return None
    from gomoku_jax.games.gomoku.observe import PLANES

    game = env.config
    planes = list(PLANES[game.observation])
    if game.has_feature_plane:
        planes.append(f"feature plane {game.feature_plane!r} of the observing side")
    return planes


def common_metadata(network: Any, model_format: str) -> dict:
    """What the metadata of every export format of `network` (a `players.Player`) says: the
    game, the input, the outputs, the net and the checkpoint."""
    env = network.env
    shape = list(env.observation_shape)
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION,
        "model_format": parse_model_format(model_format),
        "game": env.describe(),
        "input": {
            "name": "obs", "shape": ["b", *shape], "dtype": "float32",
            "planes": _planes(env),
            "made_by": "env.observe(state) for the run's game (gomoku_jax.players.Player: "
                       "player.env), vmapped over the batch",
        },
        "outputs": [
            {"name": "logits", "shape": ["b", env.num_actions], "dtype": "float32",
             "meaning": "policy logits over the game's actions (for Gomoku row * N + col), "
                        "illegal actions not masked"},
            {"name": "value", "shape": ["b"], "dtype": "float32",
             "meaning": "expected result for the side to move, in [-1, 1]"},
        ],
        "net": dataclasses.asdict(network.model.config),
        "num_params": network.model.num_params(),
        "checkpoint": {"run_dir": str(network.run_dir), "step": network.step},
    }


def metadata(network: Any, exported: jax.export.Exported) -> dict:
    """The JSON description of the StableHLO export `exported` of `network` (a
    `players.PolicyValuePlayer`): `common_metadata` and the lowering's platforms and versions."""
    return {
        **common_metadata(network, "stablehlo"),
        "platforms": list(exported.platforms),
        "jax_version": jax.__version__,
        "calling_convention_version": exported.calling_convention_version,
    }


def check_out(out: pathlib.Path, force: bool) -> None:
    """Refuse an `out` (or its metadata file) that exists without `force` or is a
    directory, and one whose directory does not exist (ValueError)."""
    for path in (out, metadata_path(out)):
        if path.is_dir():
            raise ValueError(f"{path} is a directory; --out takes a file name")
        if path.exists() and not force:
            raise ValueError(f"{path} exists; pass --force to overwrite it")
    if not out.absolute().parent.is_dir():
        raise ValueError(f"directory {out.absolute().parent} does not exist")


def load_policy_value(checkpoint: str | pathlib.Path, step: Optional[int]) -> Any:
    """The `players.PolicyValuePlayer` of a run; ValueError for a bad path or step or a run
    of another kind of network (a GMO run)."""
    from gomoku_jax.players import PolicyValuePlayer, load

    network = load(checkpoint, step)
    if not isinstance(network, PolicyValuePlayer):
        raise ValueError(f"{checkpoint} is a {network.algo} run of a {network.kind} network: "
                         f"export takes a policy-value network (a run of `gomoku-jax train "
                         f"--algo alphazero`)")
    return network


def write(out: pathlib.Path, data: bytes, meta: dict) -> None:
    """Write an export's bytes to `out` and its metadata to `metadata_path(out)`."""
    out.write_bytes(data)
    metadata_path(out).write_text(json.dumps(meta, indent=1) + "\n")


def export_checkpoint(checkpoint: str | pathlib.Path, out: str | pathlib.Path, *,
                      step: Optional[int] = None,
                      platforms: Optional[str | Sequence[str]] = None,
                      force: bool = False) -> dict:
    """Export the network of a run (directory, checkpoints/ or checkpoints/<step>) to `out`
    as serialized StableHLO and its metadata to `metadata_path(out)`; returns the metadata
    (`export_onnx.export_checkpoint` is the same for ONNX).

    Raises:
      ValueError: a bad checkpoint path or step, a GMO run, bad platforms, an `out` that
        exists (without `force`), is a directory, or whose directory does not exist.
    """
    out = pathlib.Path(out)
    check_out(out, force)
    platforms = parse_platforms(platforms)
    network = load_policy_value(checkpoint, step)
    exported = export_apply(network.model.apply, network.variables,
                            network.env.observation_shape, platforms)
    meta = metadata(network, exported)
    write(out, exported.serialize(), meta)
    return meta


def load_exported(path: str | pathlib.Path) -> Callable[[Any], tuple[jax.Array, jax.Array]]:
    """The exported network at `path` as a jitted function
    `f(obs float32[b, *obs_shape]) -> (logits float32[b, A], value float32[b])`
    (compiled once per batch size). It calls nothing but jax: importing this module loads
    `gomoku_jax`'s game package, never the training code (flax.nnx, orbax, optax, mctx).

    Raises:
      ValueError: a missing file, or one that is not a serialized `jax.export`.
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise ValueError(f"no exported network at {path}")
    try:
        exported = jax.export.deserialize(bytearray(path.read_bytes()))
    except Exception as e:  # flatbuffers raises assorted errors on foreign bytes
        raise ValueError(f"{path} is not a serialized jax.export network "
                         f"({type(e).__name__}: {e})") from None
    return jax.jit(exported.call)


def load_metadata(path: str | pathlib.Path) -> dict:
    """The metadata written beside the export at `path` (`metadata_path(path)`)."""
    meta = metadata_path(path)
    if not meta.is_file():
        raise ValueError(f"no metadata at {meta}")
    return json.loads(meta.read_text())
