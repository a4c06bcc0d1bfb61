"""A trained network as an ONNX model: `gomoku-jax export --format onnx`.

    pip install "gomoku-jax[onnx]"          # jax2onnx (the converter) and onnxruntime
    gomoku-jax export --checkpoint runs/quick --out quick.onnx --format onnx

writes OUT, an ONNX model (opset `OPSET`) of the same inference function as the StableHLO
export (`gomoku_jax.io.export.inference_function`):

    input  "obs"     float32[b, *obs_shape]   (Gomoku: [b, N, N, C], NHWC as env.observe)
    output "logits"  float32[b, A]            (unmasked; Gomoku: action = row * N + col)
    output "value"   float32[b]               (the side to move's expected result, [-1, 1])

with the parameters and BatchNorm statistics baked in as initializers. The batch dimension
is symbolic: jax2onnx supports it, the input and outputs carry the dim_param "b", and one
file takes any batch size >= 1. Beside it, OUT.json holds the same metadata as the
StableHLO export (`export.common_metadata`, "model_format": "onnx") plus an "onnx" block:
the opset, the IR version, the converter's version and the result of the check below.

Running it needs onnxruntime and numpy only:

    import numpy as np, onnxruntime as ort
    session = ort.InferenceSession("quick.onnx", providers=["CPUExecutionProvider"])
    logits, value = session.run(None, {"obs": obs})    # obs: np.float32[b, *obs_shape]

Two things the export does beyond calling the converter:
  * jax2onnx (0.13 to 0.17 at least) runs convolutions in NCHW and moves the transposes
    out of a ResNet's trunk, but leaves the graph's `value_info` shape annotations of the
    moved tensors in NHWC; with two residual blocks or more onnxruntime then refuses the
    model ("[ShapeInferenceError] Incompatible dimensions" at an Add). The annotations are
    optional, so they are dropped and `onnx.checker` (full check, shape inference included)
    must pass.
  * the model is run in onnxruntime on random observations (batch sizes `CHECK_BATCHES`)
    and compared with the JAX network: an export whose outputs differ by more than
    `CHECK_TOLERANCE` (absolute and relative) is refused (ValueError) rather than written.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import logging
import pathlib
import warnings
from typing import Any, Callable, Optional, Sequence

import jax
import numpy as np

from gomoku_jax.io import export

INSTALL = 'pip install "gomoku-jax[onnx]"'
OPSET = 17  # Conv, BatchNormalization, Gemm, Relu, Tanh, Reshape: all older than 17
CHECK_BATCHES = (1, 3)
CHECK_TOLERANCE = 1e-4  # ONNX vs JAX, logits and value: atol = rtol = this
INPUT_NAME, OUTPUT_NAMES = "obs", ("logits", "value")


def require() -> tuple[Any, Any, Any]:
    """The modules `(jax2onnx, onnx, onnxruntime)`.

    Raises:
      ValueError: one is not installed (the message says `pip install "gomoku-jax[onnx]"`).
    """
    modules = []
    for name in ("jax2onnx", "onnx", "onnxruntime"):
        try:
            modules.append(importlib.import_module(name))
        except ImportError as e:
            raise ValueError(f"--format onnx needs the onnx extra ({name} is not installed: "
                             f"{e}); install it with: {INSTALL}") from None
    return tuple(modules)


@contextlib.contextmanager
def _quiet(*loggers: str):
    """Silence `loggers` below ERROR while converting: onnx_ir warns once per untyped shape
    constant, and jax2onnx's BatchNorm plugin warns on the root logger that it converts "to
    inference mode" (it reads the module's attribute, not the `use_running_average=True`
    that `PolicyValueModel.apply` passes; inference mode is what the network runs)."""
    saved = [(log, log.level) for log in map(logging.getLogger, loggers)]
    for log, _ in saved:
        log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for log, level in saved:
            log.setLevel(level)


def convert(forward: Callable[[jax.Array], tuple[jax.Array, jax.Array]],
            observation_shape: Sequence[int], *, opset: int = OPSET) -> Any:
    """`forward` (obs float32[B, *observation_shape] -> (logits float32[B, A], value
    float32[B])) as a checked `onnx.ModelProto` with a symbolic batch dimension "b"."""
    jax2onnx, onnx, _ = require()
    with _quiet("", "onnx_ir", "jax2onnx"), warnings.catch_warnings():
        # jax2onnx 0.13's plugins use flax's and jax's deprecated `.value` and DropVar
        warnings.filterwarnings("ignore", category=DeprecationWarning, module="jax2onnx")
        model = jax2onnx.to_onnx(forward, [("b", *(int(d) for d in observation_shape))],
                                 model_name="gomoku_jax_policy_value", opset=opset,
                                 input_names=[INPUT_NAME], output_names=list(OUTPUT_NAMES))
    del model.graph.value_info[:]  # stale NHWC annotations (module docstring)
    onnx.checker.check_model(model, full_check=True)
    return model


def session(model_bytes: bytes) -> Any:
    """An onnxruntime `InferenceSession` of the model on the CPU: `session.run(None,
    {"obs": obs float32[b, *obs_shape]})` -> [logits float32[b, A], value float32[b]]."""
    _, _, ort = require()
    return ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])


def check(model_bytes: bytes, forward: Callable, observation_shape: Sequence[int]) -> dict:
    """Compare the ONNX model in onnxruntime with `forward` on random 0/1 observations of
    each batch size in `CHECK_BATCHES`; returns {"batch_sizes", "max_abs_diff"}.

    Raises:
      ValueError: a shape or dtype that differs, or a value off by more than
        `CHECK_TOLERANCE` * (1 + |JAX's value|).
    """
    onnx_session, rng, worst = session(model_bytes), np.random.default_rng(0), 0.0
    for b in CHECK_BATCHES:
        obs = (rng.random((b, *observation_shape)) < 0.3).astype(np.float32)
        got = onnx_session.run(list(OUTPUT_NAMES), {INPUT_NAME: obs})
        want = jax.device_get(forward(obs))
        for name, g, w in zip(OUTPUT_NAMES, got, want):
            if g.shape != w.shape or g.dtype != np.float32:
                raise ValueError(f"the ONNX model's {name} is {g.dtype}{list(g.shape)} for a "
                                 f"batch of {b}, expected float32{list(w.shape)}")
            diff = np.abs(g - w)
            if not np.all(diff <= CHECK_TOLERANCE * (1 + np.abs(w))):
                raise ValueError(f"the ONNX model's {name} differs from the JAX network's by "
                                 f"up to {diff.max():.3g} (tolerance {CHECK_TOLERANCE} "
                                 f"absolute and relative): a converter problem; the "
                                 f"StableHLO export (--format stablehlo) does not go through it")
            worst = max(worst, float(diff.max()))
    return {"batch_sizes": list(CHECK_BATCHES), "max_abs_diff": worst}


def export_network(network: Any) -> tuple[bytes, dict]:
    """The serialized, checked ONNX model of `network` (a `players.PolicyValuePlayer` with a
    policy-value model) and its metadata.

    Raises:
      ValueError: the extra is missing, or the model fails `check`.
    """
    _, onnx, _ = require()
    forward = export.inference_function(network.model.apply, network.variables)
    shape = tuple(network.env.observation_shape)
    model = convert(forward, shape)
    data = model.SerializeToString()
    meta = export.common_metadata(network, "onnx")
    meta["onnx"] = {
        "opset": next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
        "ir_version": model.ir_version,
        "converter": f"jax2onnx {importlib.metadata.version('jax2onnx')}",
        "onnx_version": onnx.__version__,
        "check": check(data, forward, shape),
    }
    meta["jax_version"] = jax.__version__
    return data, meta


def export_checkpoint(checkpoint: str | pathlib.Path, out: str | pathlib.Path, *,
                      step: Optional[int] = None, force: bool = False) -> dict:
    """Export the network of a run (directory, checkpoints/ or checkpoints/<step>) to `out`
    as an ONNX model and its metadata to `export.metadata_path(out)`; returns the metadata.

    Raises:
      ValueError: the onnx extra is missing, a bad checkpoint path or step, a GMO run, an
        `out` that exists (without `force`), is a directory, or whose directory does not
        exist, or a model that fails `check`.
    """
    out = pathlib.Path(out)
    export.check_out(out, force)
    require()  # before the slow part, a missing extra says so
    data, meta = export_network(export.load_policy_value(checkpoint, step))
    export.write(out, data, meta)
    return meta
