"""`gomoku-jax train` (`gomoku_jax.cli.train` through `gomoku_jax.cli.main`): errors, the
key listing, and a short real run's files."""

from __future__ import annotations

import json

import pytest

from gomoku_jax import cli
from gomoku_jax.players import run_dir as rd
from gomoku_jax.train import load_config, preset
from gomoku_jax.train.config import PRESETS, override, valid_keys

SETS = ["replay.synthetic_fraction=0", "eval.every=0", "eval.opponents=random",
        "run.iterations=3"]


def sets(assignments):
    return [x for a in assignments for x in ("--set", a)]


def test_unknown_key_exits_with_valid_keys(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "--preset", "test", "--set", "bogus.key=1",
                  "--run-dir", str(tmp_path / "run")])
    message = str(e.value.code)
    assert message.startswith("error: unknown config key 'bogus.key'; valid keys:")
    for key in valid_keys(preset("test")):
        assert key in message
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("argv, message", [
    (["--set", "selfplay.games=lots"], "field 'games' takes an int, got 'lots'"),
    (["--set", "selfplay.games"], "error: --set takes section.field=value"),
    (["--set", "optim.schedule=step"], "error: optim.schedule must be one of"),
    (["--stop-after", "0"], "error: --stop-after must be >= 1, got 0"),
    (["--resume"], "is not a run directory: no config.json in it"),
    (["--resume", "--set", "run.seed=1"], "error: --resume continues the run's own config; "
                                          "--set may change only run.iterations"),
    (["--set", "eval.opponents=random;nobody"], "error:"),
])
def test_bad_flags_exit_with_clear_errors(argv, message, tmp_path):
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "--preset", "test", "--run-dir", str(tmp_path / "run"),
                  "--no-progress"] + argv)
    assert message in str(e.value.code)


def test_unknown_preset_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "--preset", "huge"])
    assert e.value.code == 2
    assert "invalid choice: 'huge'" in capsys.readouterr().err


def test_list_keys_prints_every_key_with_its_value(capsys):
    assert cli.main(["train", "--preset", "test", "--list-keys",
                     "--set", "selfplay.games=16"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split(" = ")[0] for line in lines] == valid_keys(preset("test"))
    values = dict(line.split(" = ", 1) for line in lines)
    assert values["selfplay.games"] == "16"
    assert values["game.board_size"] == "7"
    assert json.loads(values["eval.opponents"]) == ["random", "previous"]
    assert values["selfplay.carry_games"] == "true"


def test_help_mentions_presets(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--preset", "--set", "--resume", "--stop-after", "--list-keys"):
        assert flag in out
    # every preset of every registered algorithm, with its note, read from the registry
    from gomoku_jax.train import algorithms

    lines = out.splitlines()
    for name in algorithms.presets():
        note = PRESETS.note(name)
        assert note, name
        assert any(line.split() == [name, *note.split()] for line in lines), (name, out)


def scalar_tags(log_dir) -> set[str]:
    """The scalar tags in the TensorBoard event files of `log_dir` (TFRecord framing: u64
    length, u32 crc, an Event proto, u32 crc)."""
    import struct

    from tensorboardX.proto import event_pb2

    tags = set()
    for path in log_dir.glob("events.out.tfevents.*"):
        data = path.read_bytes()
        pos = 0
        while pos < len(data):
            (length,) = struct.unpack("<Q", data[pos:pos + 8])
            event = event_pb2.Event.FromString(data[pos + 12:pos + 12 + length])
            tags.update(v.tag for v in event.summary.value)
            pos += 12 + length + 4
    return tags


def test_short_run_writes_its_files_and_refuses_another_config(tmp_path, capsys):
    run = tmp_path / "run"
    assert cli.main(["train", "--preset", "test", "--run-dir", str(run), "--stop-after", "1",
                     "--no-progress"] + sets(SETS)) == 0
    out = capsys.readouterr().out
    assert f"{run}: 1 iterations in" in out
    for name in ("config.json", "metrics.jsonl", "checkpoints"):
        assert (run / name).exists(), name
    assert not (run / rd.SUMMARY_FILE).exists()  # written when the run finishes
    assert load_config(run) == override(preset("test"), SETS)
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in records] == [1]
    assert {"loss", "games", "buffer_size", "seconds"} <= set(records[0])
    assert rd.manager(run, read_only=True).all_steps() == [1]
    # TensorBoard (tensorboardX is a dev dependency): one event file with the metrics
    assert {"loss", "value_loss", "games"} <= scalar_tags(run / "tensorboard")
    # the same directory with another config is refused, with a hint to --resume
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "--preset", "test", "--run-dir", str(run), "--no-progress"]
                 + sets(SETS + ["run.seed=4"]))
    assert "holds a run with a different config (run.seed differ)" in str(e.value.code)
    assert "--resume" in str(e.value.code)
    # a resume may not change how the run trains
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "--run-dir", str(run), "--resume", "--no-progress",
                  "--set", "optim.learning_rate=0.1"])
    assert "not optim.learning_rate" in str(e.value.code)
