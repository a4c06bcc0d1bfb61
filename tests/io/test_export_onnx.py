"""`gomoku-jax export --format onnx`: the network as an ONNX model that onnxruntime runs for
any batch size and that matches the JAX network; the StableHLO export's metadata; clear
errors (a bad format, an existing file, --platforms, the missing extra, a model that
differs)."""

from __future__ import annotations

import sys

import jax
import numpy as np
import pytest

from gomoku_jax import cli
from gomoku_jax.io import export, export_onnx
from gomoku_jax.players import load

BATCHES = (1, 6)  # the ONNX batch dimension is symbolic: both sizes run on one file
TOL = 1e-4  # atol and rtol, ONNX (onnxruntime, CPU) vs JAX
EXTRA = 'pip install "gomoku-jax[onnx]"'


def _require_extra():
    for name in ("jax2onnx", "onnx", "onnxruntime"):
        pytest.importorskip(name, reason=f"the onnx extra is not installed ({EXTRA}); CI "
                                         f"installs it with the dev extra")


@pytest.fixture(scope="module")
def onnx_file(trained_run, tmp_path_factory):
    _require_extra()
    out = tmp_path_factory.mktemp("export_onnx") / "net.onnx"
    assert cli.main(["export", "--format", "onnx", "--checkpoint", str(trained_run),
                     "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def network(trained_run):
    return load(trained_run)


def observations(shape, batch, seed):
    """Random 0/1 planes, float32[batch, *shape] (the network takes any float32 input)."""
    rng = np.random.default_rng(seed)
    return (rng.random((batch, *shape)) < 0.3).astype(np.float32)


@pytest.mark.slow
def test_onnxruntime_matches_the_network_for_any_batch(onnx_file, network):
    import onnxruntime as ort

    session = ort.InferenceSession(str(onnx_file), providers=["CPUExecutionProvider"])
    shape = network.env.observation_shape
    [obs_in] = session.get_inputs()
    assert (obs_in.name, obs_in.shape, obs_in.type) == ("obs", ["b", *shape], "tensor(float)")
    outs = session.get_outputs()
    assert [(o.name, o.shape, o.type) for o in outs] == [
        ("logits", ["b", network.env.num_actions], "tensor(float)"),
        ("value", ["b"], "tensor(float)")]
    apply = jax.jit(network.model.apply)  # eagerly, each layer compiles for each batch size
    for b in BATCHES:
        obs = observations(shape, b, seed=b)
        logits, value = session.run(None, {"obs": obs})
        want_logits, want_value = jax.device_get(apply(network.variables, obs))
        assert logits.shape == (b, network.env.num_actions) and value.shape == (b,)
        assert logits.dtype == value.dtype == np.float32
        np.testing.assert_allclose(logits, want_logits, rtol=TOL, atol=TOL)
        np.testing.assert_allclose(value, want_value, rtol=TOL, atol=TOL)
        assert np.abs(logits).max() > 1e-3  # not a degenerate network


def test_metadata_is_the_stablehlo_exports_but_for_the_format(onnx_file, trained_run,
                                                              tmp_path):
    meta = export.load_metadata(onnx_file)
    hlo = tmp_path / "net.jaxexport"
    assert cli.main(["export", "--checkpoint", str(trained_run), "--out", str(hlo)]) == 0
    hlo_meta = export.load_metadata(hlo)
    assert meta["model_format"] == "onnx" and hlo_meta["model_format"] == "stablehlo"
    assert meta["format_version"] == export.FORMAT_VERSION == 3
    stablehlo_only = {"platforms", "calling_convention_version"}
    assert set(hlo_meta) - set(meta) == stablehlo_only
    assert set(meta) - set(hlo_meta) == {"onnx"}
    for key in set(meta) & set(hlo_meta) - {"model_format"}:
        assert meta[key] == hlo_meta[key], key
    onnx = meta["onnx"]
    assert onnx["opset"] == export_onnx.OPSET and onnx["converter"].startswith("jax2onnx ")
    assert onnx["check"]["batch_sizes"] == list(export_onnx.CHECK_BATCHES)
    assert 0 <= onnx["check"]["max_abs_diff"] <= export_onnx.CHECK_TOLERANCE


def test_a_model_that_differs_is_refused(onnx_file, network):
    forward = export.inference_function(network.model.apply, network.variables)
    shape = network.env.observation_shape
    data = onnx_file.read_bytes()
    assert export_onnx.check(data, forward, shape)["max_abs_diff"] <= TOL

    def shifted(obs):
        logits, value = forward(obs)
        return logits, value + 1e-2

    with pytest.raises(ValueError, match="value differs from the JAX network's by up to 0.01"):
        export_onnx.check(data, shifted, shape)


def error(*argv):
    with pytest.raises(SystemExit) as e:
        cli.main(["export", *argv])
    message = str(e.value.code)
    assert message.startswith("error: "), message
    return message


def test_cli_errors(onnx_file, trained_run, tmp_path, capsys):
    with pytest.raises(SystemExit) as e:  # argparse: usage and exit status 2
        cli.main(["export", "--format", "tflite", "--checkpoint", str(trained_run),
                  "--out", str(tmp_path / "x.onnx")])
    assert e.value.code == 2
    assert "invalid choice: 'tflite'" in capsys.readouterr().err

    before = onnx_file.read_bytes()
    args = ["--format", "onnx", "--checkpoint", str(trained_run)]
    assert "net.onnx exists; pass --force" in error(*args, "--out", str(onnx_file))
    assert onnx_file.read_bytes() == before
    out = tmp_path / "x.onnx"
    assert "--platforms is for --format stablehlo" in error(*args, "--out", str(out),
                                                           "--platforms", "cpu")
    with pytest.raises(ValueError, match=r"unknown export format 'tf'; choose from"):
        export.common_metadata(load(trained_run), "tf")
    assert not out.exists() and not export.metadata_path(out).exists()


def test_without_the_extra_a_clear_error(trained_run, tmp_path, monkeypatch):
    """Runs without the extra too: an import of jax2onnx (or onnxruntime) that fails."""
    out = tmp_path / "x.onnx"
    for name in ("jax2onnx", "onnxruntime"):
        monkeypatch.setitem(sys.modules, name, None)  # `import name` raises ImportError
        message = error("--format", "onnx", "--checkpoint", str(trained_run), "--out", str(out))
        assert f"needs the onnx extra ({name} is not installed" in message
        assert message.endswith(f"install it with: {EXTRA}"), message
        monkeypatch.delitem(sys.modules, name)
    assert not out.exists() and not export.metadata_path(out).exists()
