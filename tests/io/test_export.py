"""`gomoku-jax export`: the network as serialized StableHLO, run by jax alone, equal to the
network it came from for any batch size; its metadata; clear errors."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gomoku_jax
from gomoku_jax import cli
from gomoku_jax.games.gomoku.observe import PLANES
from gomoku_jax.io import export
from gomoku_jax.nets.resnet import NetConfig
from gomoku_jax.players import load

BATCHES = (1, 5)  # the exported batch dimension is symbolic: both sizes use one file


@pytest.fixture(scope="module")
def exported(trained_run, tmp_path_factory):
    out = tmp_path_factory.mktemp("export") / "net.jaxexport"
    assert cli.main(["export", "--checkpoint", str(trained_run), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def network(trained_run):
    player = load(trained_run)
    return player.model, player.variables, player.env, player.step


@pytest.fixture(scope="module")
def apply(network):
    """The network's `apply`, jitted: the outputs the exports must match (run eagerly, each
    of its layers compiles for each batch size)."""
    return jax.jit(network[0].apply)


def observations(shape, batch, seed):
    """Random 0/1 planes, float32[batch, *shape] (the network takes any float32 input)."""
    rng = np.random.default_rng(seed)
    return (rng.random((batch, *shape)) < 0.3).astype(np.float32)


def test_runs_with_jax_alone_and_matches_the_network(exported, network, apply, tmp_path):
    _, variables, env, _ = network
    shape = env.observation_shape
    inputs = {f"obs{b}": observations(shape, b, seed=b) for b in BATCHES}
    np.savez(tmp_path / "inputs.npz", **inputs)
    script = textwrap.dedent(f"""
        import sys
        import jax, numpy as np
        exported = jax.export.deserialize(bytearray(open({str(exported)!r}, "rb").read()))
        inputs = np.load({str(tmp_path / "inputs.npz")!r})
        outputs = {{}}
        for name in inputs.files:
            logits, value = exported.call(inputs[name])
            outputs["logits_" + name], outputs["value_" + name] = logits, value
        assert not [m for m in sys.modules if m.startswith(("gomoku_jax", "flax"))]
        np.savez({str(tmp_path / "outputs.npz")!r}, **outputs)

        # load_exported's module pulls in none of the training stack
        from gomoku_jax.io.export import load_exported
        f = load_exported({str(exported)!r})
        logits, value = f(inputs["obs5"])
        assert np.array_equal(logits, outputs["logits_obs5"]), "load_exported differs"
        heavy = ("gomoku_jax.train", "gomoku_jax.nets", "flax.nnx", "orbax", "optax", "mctx")
        loaded = [m for m in sys.modules if m.startswith(heavy)]
        assert not loaded, loaded
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    outputs = np.load(tmp_path / "outputs.npz")
    n = shape[0]
    for b in BATCHES:
        obs = inputs[f"obs{b}"]
        want_logits, want_value = jax.device_get(apply(variables, obs))
        logits, value = outputs[f"logits_obs{b}"], outputs[f"value_obs{b}"]
        assert logits.shape == (b, n * n) and value.shape == (b,)
        assert logits.dtype == value.dtype == np.float32
        np.testing.assert_allclose(logits, want_logits, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(value, want_value, rtol=1e-5, atol=1e-5)


def test_load_exported_in_process(exported, network, apply):
    _, variables, env, _ = network
    f = export.load_exported(exported)
    shape = env.observation_shape
    for b in BATCHES:
        obs = observations(shape, b, seed=10 + b)
        logits, value = f(obs)
        want_logits, want_value = apply(variables, obs)
        np.testing.assert_allclose(logits, want_logits, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(value, want_value, rtol=1e-5, atol=1e-5)


def test_metadata(exported, network, trained_run):
    model, _, env, step = network
    meta = export.load_metadata(exported)
    assert meta == json.loads((exported.parent / (exported.name + ".json")).read_text())
    n, c = env.board_size, model.observation_shape[-1]
    assert meta["format"] == export.FORMAT and meta["format_version"] == export.FORMAT_VERSION == 3
    assert meta["model_format"] == "stablehlo"
    assert meta["game"] == {"id": "gomoku", "version": env.version, "board_size": 7,
                            "win_length": 4, "rule": "freestyle", "observation": "canonical",
                            "feature_plane": "none"}
    assert meta["game"] == env.describe()
    # the metadata alone rebuilds the game the network was trained on
    game = {k: v for k, v in meta["game"].items() if k not in ("id", "version")}
    assert gomoku_jax.make(meta["game"]["id"], **game) == env
    assert meta["input"]["shape"] == ["b", n, n, c] == ["b", *env.observation_shape]
    assert meta["input"]["dtype"] == "float32" and meta["input"]["name"] == "obs"
    assert meta["input"]["planes"] == list(PLANES["canonical"]) and len(PLANES["canonical"]) == c
    assert [o["name"] for o in meta["outputs"]] == ["logits", "value"]
    assert meta["outputs"][0]["shape"] == ["b", n * n] and meta["outputs"][1]["shape"] == ["b"]
    assert meta["net"] == json.loads((trained_run / "config.json").read_text())["net"]
    assert meta["num_params"] == model.num_params()
    assert meta["checkpoint"] == {"run_dir": str(trained_run.absolute()), "step": 5} and step == 5
    assert meta["platforms"] == [jax.export.default_export_platform()]


def test_multi_platform_export_runs_here(trained_run, tmp_path, network, apply):
    _, variables, env, _ = network
    out = tmp_path / "multi.bin"
    meta = export.export_checkpoint(trained_run / "checkpoints" / "5", out,
                                    platforms="cpu,cuda")
    assert meta["platforms"] == ["cpu", "cuda"] and meta["checkpoint"]["step"] == 5
    exp = jax.export.deserialize(bytearray(out.read_bytes()))
    assert exp.platforms == ("cpu", "cuda")
    obs = observations(env.observation_shape, 3, seed=7)
    np.testing.assert_allclose(exp.call(obs)[1], apply(variables, obs)[1],
                               rtol=1e-5, atol=1e-5)


@dataclasses.dataclass(frozen=True)
class LinearModel:
    """A stand-in network for any observation shape: linear logits, tanh value."""

    config: NetConfig = NetConfig(blocks=1, channels=1)

    def apply(self, variables, obs):
        w, b = variables
        flat = obs.reshape(obs.shape[0], -1)
        return flat @ w, jnp.tanh(flat.sum(-1) * b)

    def num_params(self):
        return 6 * 7 * 2 * 7 + 1


def test_export_apply_and_metadata_for_another_game(tmp_path):
    """Nothing Gomoku-specific: Connect Four's [6, 7, 2] planes and 7 actions, no plane names."""
    env = gomoku_jax.make("pgx/connect_four")
    model = LinearModel()
    rng = np.random.default_rng(0)
    variables = (rng.normal(size=(6 * 7 * 2, 7)).astype(np.float32), np.float32(0.1))
    exp = export.export_apply(model.apply, variables, env.observation_shape)
    assert exp.platforms == (jax.export.default_export_platform(),)
    for b in BATCHES:
        obs = observations(env.observation_shape, b, seed=20 + b)
        logits, value = exp.call(obs)
        assert logits.shape == (b, 7) and value.shape == (b,)
        want_logits, want_value = jax.jit(model.apply)(variables, obs)
        np.testing.assert_allclose(logits, want_logits, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(value, want_value, rtol=1e-5, atol=1e-5)
    network = types.SimpleNamespace(env=env, model=model, variables=variables,
                                    run_dir=tmp_path, step=3)
    meta = export.metadata(network, exp)
    assert meta["game"] == env.describe() and meta["game"]["id"] == "pgx/connect_four"
    assert meta["input"]["shape"] == ["b", 6, 7, 2] and meta["input"]["planes"] is None
    assert meta["outputs"][0]["shape"] == ["b", 7] and meta["outputs"][1]["shape"] == ["b"]
    assert meta["net"] == dataclasses.asdict(model.config) and meta["num_params"] == 589
    assert meta["checkpoint"] == {"run_dir": str(tmp_path), "step": 3}
    assert json.loads(json.dumps(meta)) == meta  # JSON as it is


def test_platform_names():
    assert export.parse_platforms(None) == (jax.export.default_export_platform(),)
    assert export.parse_platforms(" CPU, cuda ") == ("cpu", "cuda")
    with pytest.raises(ValueError, match=r"unknown platform\(s\) \['gpu'\].*'cuda'"):
        export.parse_platforms("cpu,gpu")
    with pytest.raises(ValueError, match="given twice"):
        export.parse_platforms("cpu,cpu")


def test_cli_errors(trained_run, exported, tmp_path, capsys):
    def error(*argv):
        with pytest.raises(SystemExit) as e:
            cli.main(["export", *argv])
        message = str(e.value.code)
        assert message.startswith("error: "), message
        return message

    out = str(tmp_path / "x.bin")
    assert "does not exist" in error("--checkpoint", str(tmp_path / "missing"), "--out", out)
    assert "is not a run directory" in error("--checkpoint", str(tmp_path), "--out", out)
    assert "has no checkpoint 9; it has [3, 4, 5]" in error("--checkpoint", str(trained_run),
                                                      "--step", "9", "--out", out)
    assert "unknown platform" in error("--checkpoint", str(trained_run), "--out", out,
                                       "--platforms", "gpu")
    assert "does not exist" in error("--checkpoint", str(trained_run),
                                     "--out", str(tmp_path / "no" / "x.bin"))
    assert "is a directory" in error("--checkpoint", str(trained_run), "--out", str(tmp_path))
    assert not (tmp_path / "x.bin").exists()

    before = exported.read_bytes()
    message = error("--checkpoint", str(trained_run), "--out", str(exported))
    assert "exists; pass --force" in message
    assert exported.read_bytes() == before
    # the metadata file alone is enough to refuse
    lone = tmp_path / "lone.bin"
    (tmp_path / "lone.bin.json").write_text("{}")
    assert "lone.bin.json exists" in error("--checkpoint", str(trained_run), "--out", str(lone))
    capsys.readouterr()
    assert cli.main(["export", "--checkpoint", str(trained_run), "--out", str(lone),
                     "--force"]) == 0
    assert "obs float32[b, 7, 7, 5] -> logits float32[b, 49], value float32[b]" in \
        capsys.readouterr().out
    assert export.load_metadata(lone)["checkpoint"]["step"] == 5


def test_load_exported_errors(tmp_path):
    with pytest.raises(ValueError, match="no exported network at"):
        export.load_exported(tmp_path / "missing.bin")
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"not a flatbuffer at all" * 4)
    with pytest.raises(ValueError, match="is not a serialized jax.export network"):
        export.load_exported(junk)
    with pytest.raises(ValueError, match="no metadata at"):
        export.load_metadata(junk)
