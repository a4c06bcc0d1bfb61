"""A trained network as serialized StableHLO (`jax.export`), runnable with jax alone.

    gomoku-jax export --checkpoint runs/quick --out quick.jaxexport
    gomoku-jax export --checkpoint runs/quick/checkpoints/40 --out q40.jaxexport \\
        --platforms cpu,cuda

writes two files:

    OUT        `jax.export.Exported.serialize()` of the inference function
                 obs float32[b, N, N, C] -> (logits float32[b, N*N], value float32[b])
               with a symbolic batch size b (any b >= 1) and the network's parameters and
               BatchNorm statistics baked in as constants;
    OUT.json   what a player needs to know (`metadata`): the game (board size, win length,
               rule), the observation form and the meaning of each input plane, the feature
               plane, the outputs, the net config, the run and step, the platforms.

Running it needs jax only (no flax, no gomoku_jax):

    import jax, numpy as np
    exported = jax.export.deserialize(bytearray(open("quick.jaxexport", "rb").read()))
    logits, value = exported.call(obs)       # obs: np.float32[b, N, N, C]

or `load_exported(path)` from here. The input planes are those of
`gomoku_jax.game.observe.observe` for the run's game config; logits are unmasked (mask the
occupied cells before taking a move), action = row * N + col; value is the side to move's
expected result in [-1, 1].

The lowering targets the current backend by default; `--platforms cpu,cuda` makes one file
for several (a platform need not be present to be lowered for).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
from typing import Any, Callable, Optional, Sequence

import jax
import jax.numpy as jnp

FORMAT = "gomoku_jax.export"
FORMAT_VERSION = 1
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


def export_apply(apply: Callable[[Any, jax.Array], tuple[jax.Array, jax.Array]],
                 variables: Any, observation_shape: tuple[int, int, int],
                 platforms: Optional[Sequence[str]] = None) -> jax.export.Exported:
    """`obs -> apply(variables, obs)` exported with `variables` as constants.

    Args:
      apply: `(variables, obs float32[B, N, N, C]) -> (logits [B, N*N], value [B])`.
      observation_shape: (N, N, C); the batch dimension is symbolic ("b").
      platforms: lowering platforms (default: the current backend's).
    Returns:
      The `jax.export.Exported` (`.serialize()` gives the bytes).
    """
    n, n2, c = observation_shape
    platforms = parse_platforms(platforms)
    spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape(f"b, {n}, {n2}, {c}"), jnp.float32)

    def forward(obs):
        logits, value = apply(variables, obs)
        return logits.astype(jnp.float32), value.reshape(-1).astype(jnp.float32)

    return jax.export.export(jax.jit(forward), platforms=platforms)(spec)


def metadata(network: Any, exported: jax.export.Exported) -> dict:
    """The JSON description of an export of `network` (a `TrainedNetwork`)."""
    from gomoku_jax.game.observe import PLANES

    game = network.config.game
    n = game.board_size
    c = network.model.in_planes
    planes = list(PLANES[game.observation])
    if game.feature_plane != "none":
        planes.append(f"feature plane {game.feature_plane!r} of the side to move")
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION,
        "game": {"board_size": n, "win_length": game.win_length, "rule": game.rule},
        "input": {
            "name": "obs", "shape": ["b", n, n, c], "dtype": "float32",
            "observation": game.observation, "feature_plane": game.feature_plane,
            "planes": planes,
            "made_by": "gomoku_jax.game.observe.observe(state) for the game config of the "
                       "run (gomoku_jax.train.config: config.game.game_config())",
        },
        "outputs": [
            {"name": "logits", "shape": ["b", n * n], "dtype": "float32",
             "meaning": "policy logits over actions row * N + col, occupied cells not masked"},
            {"name": "value", "shape": ["b"], "dtype": "float32",
             "meaning": "expected result for the side to move, in [-1, 1]"},
        ],
        "net": dataclasses.asdict(network.model.config),
        "num_params": network.model.num_params(),
        "checkpoint": {"run_dir": str(network.run_dir), "step": network.step},
        "platforms": list(exported.platforms),
        "jax_version": jax.__version__,
        "calling_convention_version": exported.calling_convention_version,
    }


def export_checkpoint(checkpoint: str | pathlib.Path, out: str | pathlib.Path, *,
                      step: Optional[int] = None,
                      platforms: Optional[str | Sequence[str]] = None,
                      force: bool = False) -> dict:
    """Export the network of a run (directory, checkpoints/ or checkpoints/<step>) to `out`
    and its metadata to `metadata_path(out)`; returns the metadata.

    Raises:
      ValueError: a bad checkpoint path or step, bad platforms, an `out` that exists
        (without `force`), is a directory, or whose directory does not exist.
    """
    from gomoku_jax.eval.trained import load

    out = pathlib.Path(out)
    meta_out = metadata_path(out)
    for path in (out, meta_out):
        if path.is_dir():
            raise ValueError(f"{path} is a directory; --out takes a file name")
        if path.exists() and not force:
            raise ValueError(f"{path} exists; pass --force to overwrite it")
    if not out.absolute().parent.is_dir():
        raise ValueError(f"directory {out.absolute().parent} does not exist")
    platforms = parse_platforms(platforms)
    network = load(checkpoint, step)
    exported = export_apply(network.model.apply, network.variables,
                            network.game_config.observation_shape, platforms)
    meta = metadata(network, exported)
    out.write_bytes(exported.serialize())
    meta_out.write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def load_exported(path: str | pathlib.Path) -> Callable[[Any], tuple[jax.Array, jax.Array]]:
    """The exported network at `path` as a jitted function
    `f(obs float32[b, N, N, C]) -> (logits float32[b, N*N], value float32[b])`
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


# ---------------------------------------------------------------------- command line


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True, metavar="PATH",
                        help="a run directory of `gomoku-jax train`, its checkpoints/ "
                             "directory or checkpoints/<step>")
    parser.add_argument("--out", required=True, metavar="FILE",
                        help="the serialized export; its metadata goes to FILE.json")
    parser.add_argument("--step", type=int, metavar="N",
                        help="the checkpoint step (default: the latest, or the one PATH names)")
    parser.add_argument("--platforms", metavar="LIST",
                        help=f"comma-separated lowering platforms from {', '.join(PLATFORMS)} "
                             f"(default: this machine's, "
                             f"{jax.export.default_export_platform()})")
    parser.add_argument("--force", action="store_true", help="overwrite FILE and FILE.json")
    return parser


def main(args: argparse.Namespace) -> int:
    try:
        meta = export_checkpoint(args.checkpoint, args.out, step=args.step,
                                 platforms=args.platforms, force=args.force)
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    out = pathlib.Path(args.out)
    n, c = meta["game"]["board_size"], meta["input"]["shape"][-1]
    ck = meta["checkpoint"]
    print(f"exported {ck['run_dir']} step {ck['step']} ({meta['num_params']:,} params) for "
          f"{', '.join(meta['platforms'])}:")
    print(f"  {out} ({out.stat().st_size / 1e6:.2f} MB): obs float32[b, {n}, {n}, {c}] -> "
          f"logits float32[b, {n * n}], value float32[b]")
    print(f"  {metadata_path(out)}: game, input planes, net config")
    return 0
