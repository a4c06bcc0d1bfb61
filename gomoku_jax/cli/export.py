"""`gomoku-jax export`: a trained network as serialized StableHLO (default) or an ONNX model,
plus JSON metadata (see `gomoku_jax.io.export` and `gomoku_jax.io.export_onnx`).

    gomoku-jax export --checkpoint runs/quick --out quick.jaxexport
    gomoku-jax export --checkpoint runs/quick --out quick.onnx --format onnx
"""

from __future__ import annotations

import argparse
import pathlib
from typing import Optional

from gomoku_jax.io.export import MODEL_FORMATS, PLATFORMS, export_checkpoint, metadata_path


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
    parser.add_argument("--format", choices=MODEL_FORMATS, default=MODEL_FORMATS[0],
                        dest="model_format",
                        help="stablehlo: a serialized jax.export, run with jax (default); "
                             "onnx: an ONNX model, run with onnxruntime (needs "
                             "pip install \"gomoku-jax[onnx]\")")
    parser.add_argument("--platforms", metavar="LIST",
                        help=f"comma-separated lowering platforms from {', '.join(PLATFORMS)} "
                             f"(default: this machine's; stablehlo only)")
    parser.add_argument("--force", action="store_true", help="overwrite FILE and FILE.json")
    return parser


def export(args: argparse.Namespace) -> dict:
    """Run the export `args` ask for; returns its metadata (ValueError for bad input)."""
    if args.model_format == "onnx":
        from gomoku_jax.io import export_onnx

        if args.platforms:
            raise ValueError("--platforms is for --format stablehlo: an ONNX model runs on "
                             "whatever execution provider onnxruntime is given")
        return export_onnx.export_checkpoint(args.checkpoint, args.out, step=args.step,
                                             force=args.force)
    return export_checkpoint(args.checkpoint, args.out, step=args.step,
                             platforms=args.platforms, force=args.force)


def main(args: argparse.Namespace) -> int:
    try:
        meta = export(args)
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    out = pathlib.Path(args.out)
    shape = ", ".join(str(d) for d in meta["input"]["shape"])
    actions = meta["outputs"][0]["shape"][-1]
    ck = meta["checkpoint"]
    if meta["model_format"] == "onnx":
        onnx = meta["onnx"]
        target = (f"as ONNX (opset {onnx['opset']}, {onnx['converter']}; onnxruntime matches "
                  f"JAX to {onnx['check']['max_abs_diff']:.1e})")
    else:
        target = f"for {', '.join(meta['platforms'])}"
    print(f"exported {ck['run_dir']} step {ck['step']} ({meta['num_params']:,} params) "
          f"{target}:")
    print(f"  {out} ({out.stat().st_size / 1e6:.2f} MB): obs float32[{shape}] -> "
          f"logits float32[b, {actions}], value float32[b]")
    print(f"  {metadata_path(out)}: game, input, net config")
    return 0
