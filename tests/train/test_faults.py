"""Training runs that survive faults, on every algorithm's test preset (in this process:
kill -9 itself is tests/experiments/test_kill_resume.py's): a corrupt checkpoint is
detected rather than loaded and a resume falls back past it; a NaN or an Inf stops the run
before anything of its iteration is written; a full disk during a checkpoint stops it with
the previous step intact; a second process on the run directory is refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid

import jax
import numpy as np
import pytest
from train_configs import ALGO_SETS

from gomoku_jax import cli, players
from gomoku_jax.players import run_dir as rd
from gomoku_jax.train import ALGORITHMS, checkpoint, failpoints, override, preset, train
from gomoku_jax.train.driver import TIMING_KEYS
from gomoku_jax.train.finite import NonFiniteError, all_finite
from gomoku_jax.train.lock import RunDirBusy, run_lock

ALGOS = sorted(ALGORITHMS)
SETS = ["eval.opponents="]  # the test presets: 2 iterations, a checkpoint after each


def config_of(algo, *sets):
    return override(preset(ALGORITHMS[algo].test_preset, algo),
                    [*ALGO_SETS.get(algo, ()), *SETS, *sets])


def cli_args(algo, run):
    sets = [x for s in (*ALGO_SETS.get(algo, ()), *SETS) for x in ("--set", s)]
    return ["train", "--algo", algo, "--preset", ALGORITHMS[algo].test_preset, "--run-dir",
            str(run), *sets, "--no-progress"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """{algo: a finished run directory} (steps 1 and 2), never interrupted."""
    root = tmp_path_factory.mktemp("reference")
    for algo in ALGOS:
        train(config_of(algo), root / algo, progress=False)
    return {algo: root / algo for algo in ALGOS}


def copy(run, tmp_path):
    dst = tmp_path / "run"
    shutil.copytree(run, dst)
    return dst


def metrics(run):
    return [{k: v for k, v in json.loads(line).items() if k not in TIMING_KEYS}
            for line in (run / rd.METRICS_FILE).read_text().splitlines()]


def params(run, step=None):
    return [np.asarray(x) for x in jax.tree.leaves(players.load(run, step).variables)]


def assert_same_run(run, ref):
    assert metrics(run) == metrics(ref)
    for x, y in zip(params(run), params(ref), strict=True):
        np.testing.assert_array_equal(x, y)


def steps(run):
    return sorted(rd.manager(run, read_only=True).all_steps())


def biggest_file(step_dir, item):
    """The largest array data file of an item: where a changed byte changes values."""
    return max((p for p in (step_dir / item).rglob("*") if p.is_file()),
               key=lambda p: p.stat().st_size)


def flip(path, at=0.5):
    data = bytearray(path.read_bytes())
    data[int(len(data) * at)] ^= 0x40
    path.write_bytes(bytes(data))


def truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


# -- the integrity manifest -----------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("algo", ALGOS)
def test_every_step_has_a_manifest_of_every_file(algo, reference):
    run = reference[algo]
    assert steps(run) == [1, 2]
    for step in (1, 2):
        step_dir = run / rd.CHECKPOINT_DIR / str(step)
        listed = json.loads((step_dir / rd.MANIFEST_FILE).read_text())["files"]
        on_disk = {p.relative_to(step_dir).as_posix() for p in step_dir.rglob("*")
                   if p.is_file() and p.name != rd.MANIFEST_FILE}
        assert set(listed) == on_disk and {n.split("/")[0] for n in listed} >= set(rd.ITEMS)
        assert rd.verify_step(step_dir)
    assert not (run / checkpoint.SET_ASIDE_DIR).exists()


@pytest.mark.parametrize("damage", [flip, truncate])
def test_a_corrupt_step_is_refused_naming_the_step_and_file(damage, reference, tmp_path):
    run = copy(reference["gmo"], tmp_path)
    step_dir = run / rd.CHECKPOINT_DIR / "2"
    bad = biggest_file(step_dir, "network")
    damage(bad)
    name = bad.relative_to(step_dir).as_posix()
    with pytest.raises(ValueError, match=f"checkpoint 2 in .* is corrupt: {name} "):
        players.load(run)
    with pytest.raises(SystemExit, match="error: --checkpoint .*checkpoint 2 .* is corrupt"):
        cli.main(["arena", "--checkpoint", str(run), "--a", "trained", "--b", "random",
                  "--games", "2"])
    params(run, step=1)  # the step before is fine
    # a damaged item that a reader does not open does not stop it: the state is the
    # training layer's (players read network and meta)
    (step_dir / rd.MANIFEST_FILE).unlink()
    if damage is flip:
        # why the manifest: without it, orbax loads the flipped byte without a word
        changed = params(run)
        assert any(not np.array_equal(x, y) for x, y in
                   zip(changed, params(reference["gmo"]), strict=True))


def test_only_the_items_read_are_checked(reference, tmp_path):
    run = copy(reference["alphazero"], tmp_path)
    flip(biggest_file(run / rd.CHECKPOINT_DIR / "2", "state"))
    params(run)  # players read network/ and meta/: the damaged state does not concern them
    from gomoku_jax.train.alphazero.replay_reader import load_replay

    with pytest.raises(ValueError, match="checkpoint 2 in .* is corrupt: state/"):
        load_replay(run)


def test_an_unreadable_manifest_is_corruption(reference, tmp_path):
    run = copy(reference["gmo"], tmp_path)
    (run / rd.CHECKPOINT_DIR / "2" / rd.MANIFEST_FILE).write_text("{not json")
    with pytest.raises(ValueError, match=f"checkpoint 2 in .* is corrupt: its "
                                         f"{rd.MANIFEST_FILE} is unreadable"):
        players.load(run)


@pytest.mark.parametrize("algo", ALGOS)
def test_resume_falls_back_past_a_corrupt_step(algo, reference, tmp_path, capsys):
    """The newest step fails its check: the resume continues from the one before, moves
    the bad one aside (else orbax would skip saving step 2 again, the latest being 2, and
    with keep_checkpoints=1 would delete step 1, the one resumed from) and ends where
    the uninterrupted run ended."""
    run = copy(reference[algo], tmp_path)
    bad = biggest_file(run / rd.CHECKPOINT_DIR / "2", "state")
    flip(bad)
    capsys.readouterr()
    summary = train(config_of(algo, "run.keep_checkpoints=1"), run, progress=False)
    assert summary["finished"] and not summary.get("already_finished")
    err = capsys.readouterr().err
    assert f"checkpoint 2 in {run} is corrupt: state/" in err
    assert "resuming from checkpoint 1, the newest complete one" in err
    assert_same_run(run, reference[algo])
    assert steps(run) == [2] and rd.verify_step(run / rd.CHECKPOINT_DIR / "2")
    aside, = (run / checkpoint.SET_ASIDE_DIR).iterdir()
    assert aside.name.startswith("2-") and (aside / bad.relative_to(bad.parents[3])).exists()


def test_resume_without_a_good_step_refuses(reference, tmp_path):
    run = copy(reference["gmo"], tmp_path)
    for step in (1, 2):
        truncate(biggest_file(run / rd.CHECKPOINT_DIR / str(step), "previous"))
    with pytest.raises(ValueError, match="no checkpoint in .* passes its integrity check "
                                         r"\(2, 1 are corrupt\)"):
        train(config_of("gmo"), run, progress=False)
    assert steps(run) == [1, 2]  # nothing moved


def test_a_step_without_a_manifest_is_read_unchecked(reference, tmp_path, capsys):
    """As an older run's, or one killed between orbax finishing a step and its manifest."""
    run = copy(reference["gmo"], tmp_path)
    for step in (1, 2):
        (run / rd.CHECKPOINT_DIR / str(step) / rd.MANIFEST_FILE).unlink()
    shutil.rmtree(run / rd.CHECKPOINT_DIR / "2")
    params(run)
    capsys.readouterr()
    train(config_of("gmo"), run, progress=False)
    assert "checkpoint 1 in" in capsys.readouterr().err
    assert_same_run(run, reference["gmo"])


# -- NaN and Inf ----------------------------------------------------------------------------

@pytest.mark.parametrize("algo, point", [(a, p) for a in ALGOS for p in ("params", "loss")])
def test_a_nan_stops_the_run_at_its_iteration(algo, point, tmp_path, monkeypatch):
    run = tmp_path / "run"
    monkeypatch.setenv(failpoints.ENV_VAR, f"nan@{point}:2")
    what = "the params" if point == "params" else "loss"
    with pytest.raises(NonFiniteError, match=f"iteration 2 of {run} produced NaN or Inf in "
                                             f".*{what}.*its last checkpoint, step 1, is kept"):
        train(config_of(algo), run, progress=False)
    assert steps(run) == [1] and rd.verify_step(run / rd.CHECKPOINT_DIR / "1")
    assert [m["iteration"] for m in metrics(run)] == [1]  # its metrics line is not written
    assert not (run / rd.SUMMARY_FILE).exists()
    assert not list((run / rd.CHECKPOINT_DIR).glob(f"*{checkpoint.TMP_MARK}*"))


def test_the_command_line_reports_a_nan_and_exits(tmp_path, monkeypatch):
    monkeypatch.setenv(failpoints.ENV_VAR, "nan@params:1")
    with pytest.raises(SystemExit, match="error: iteration 1 of .* produced NaN or Inf in the "
                                         "params: the run stopped there; no checkpoint was "
                                         "written"):
        cli.main(cli_args("gmo", tmp_path / "run"))
    assert not (tmp_path / "run" / rd.CHECKPOINT_DIR / "1").exists()


def test_all_finite_sees_one_bad_value_in_any_float_leaf():
    tree = {"a": np.zeros((3, 4), np.float32), "b": [np.ones(5, np.float32)],
            "n": np.arange(3)}
    assert bool(all_finite(tree))
    for bad in (np.nan, np.inf, -np.inf):
        tree["b"][0][2] = bad
        assert not bool(all_finite(tree))


# -- a full disk ----------------------------------------------------------------------------

@pytest.mark.parametrize("algo", ALGOS)
def test_a_full_disk_during_a_checkpoint_stops_the_run_cleanly(algo, reference, tmp_path,
                                                             monkeypatch):
    run = tmp_path / "run"
    monkeypatch.setenv(failpoints.ENV_VAR, "enospc@checkpoint_write:2")
    with pytest.raises(SystemExit) as e:
        cli.main(cli_args(algo, run))
    message = str(e.value.code)
    assert message.startswith(f"error: could not write checkpoint 2 in {run.absolute()}")
    assert "No space left on device" in message and "free space, then resume" in message
    assert steps(run) == [1] and rd.verify_step(run / rd.CHECKPOINT_DIR / "1")
    assert sorted(p.name for p in (run / rd.CHECKPOINT_DIR).iterdir()) == ["1"]
    monkeypatch.delenv(failpoints.ENV_VAR)
    train(config_of(algo), run, progress=False)  # space freed: the resume goes on
    assert_same_run(run, reference[algo])


def test_a_step_whose_manifest_cannot_be_written_is_not_kept(tmp_path, monkeypatch):
    run = tmp_path / "run"
    monkeypatch.setenv(failpoints.ENV_VAR, "enospc@manifest:2")
    with pytest.raises(checkpoint.CheckpointError, match="could not write checkpoint 2"):
        train(config_of("gmo"), run, progress=False)
    assert steps(run) == [1]


def test_a_full_tmpfs(reference, tmp_path):
    """A real full disk, where mounting a tmpfs is allowed (root, not in every CI)."""
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    size = sum(p.stat().st_size for p in reference["gmo"].rglob("*") if p.is_file())
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size * 3}", "tmpfs", str(mount)],
                       check=True, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("cannot mount a tmpfs here")
    try:
        run = mount / "run"
        train(config_of("gmo"), run, progress=False, stop_after=1)
        filler = mount / f"filler-{uuid.uuid4().hex}"
        with filler.open("wb", buffering=0) as f:  # fill the disk to the last byte...
            try:
                while True:
                    f.write(b"\0" * 4096)
            except OSError:
                pass
        # ... but 32 KB: room for the metrics, not for a checkpoint
        os.truncate(filler, filler.stat().st_size - 32 * 1024)
        with pytest.raises(checkpoint.CheckpointError, match="could not write checkpoint 2"):
            train(config_of("gmo"), run, progress=False)
        assert steps(run) == [1] and rd.verify_step(run / rd.CHECKPOINT_DIR / "1")
        filler.unlink()
        train(config_of("gmo"), run, progress=False)
        assert_same_run(run, reference["gmo"])
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False, capture_output=True,
                       timeout=30)


# -- one process per run directory ----------------------------------------------------------

def test_a_second_process_on_the_run_directory_is_refused(tmp_path):
    run = tmp_path / "run"
    with run_lock(run):
        with pytest.raises(RunDirBusy, match=f"{run} is in use by a training run \\(pid "
                                             f"{os.getpid()} on "):
            train(config_of("gmo"), run, progress=False)
        with pytest.raises(SystemExit, match="error: .* is in use by a training run"):
            cli.main(cli_args("gmo", run))
        assert not (run / rd.CHECKPOINT_DIR).exists()
    with run_lock(run):  # released with its holder
        pass


def test_bad_failpoint_specs_are_errors(monkeypatch):
    assert failpoints.parse("kill@iteration:2, nan@params:3") == {
        ("iteration", 2): "kill", ("params", 3): "nan"}
    for spec in ("kill@iteration", "boom@iteration:2", "kill@nowhere:2", "kill@iteration:x"):
        with pytest.raises(ValueError, match=failpoints.ENV_VAR):
            failpoints.parse(spec)
    monkeypatch.delenv(failpoints.ENV_VAR, raising=False)
    assert failpoints.hit("iteration", 2) is None
    monkeypatch.setenv(failpoints.ENV_VAR, "enospc@checkpoint_write:2")
    assert failpoints.hit("checkpoint_write", 1) is None
    with pytest.raises(OSError, match="No space left on device"):
        failpoints.hit("checkpoint_write", 2)


# -- what the writer leaves, and the metrics file -------------------------------------------

def test_clean_partial_removes_only_what_a_failed_save_left(tmp_path):
    for name in ("1", "2", f"2{checkpoint.TMP_MARK}", f"3{checkpoint.TMP_MARK}"):
        (tmp_path / name).mkdir()
    (tmp_path / "1" / rd.MANIFEST_FILE).write_text("{}")
    checkpoint.clean_partial(tmp_path, 2)  # orbax did not finish step 2: "2" is not ours
    assert sorted(p.name for p in tmp_path.iterdir()) == ["1", "2", f"3{checkpoint.TMP_MARK}"]
    checkpoint.clean_partial(tmp_path, 2, finished=True)  # finished, without its manifest
    checkpoint.clean_partial(tmp_path, 1, finished=True)  # has its manifest: kept
    checkpoint.clean_partial(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["1"]


def test_a_full_disk_while_the_metrics_are_cut_back_keeps_them(tmp_path, monkeypatch):
    """The resume rewrites metrics.jsonl without the lines after its step: through a new
    file, so a write that fails half-way (a full disk, a kill) leaves the old one whole
    (it used to be rewritten in place, losing the run's history)."""
    from gomoku_jax.train.driver import RunLogger

    lines = "".join(json.dumps({"iteration": i, "loss": 1.0 / i}) + "\n" for i in (1, 2, 3))
    (tmp_path / rd.METRICS_FILE).write_text(lines)
    real = type(tmp_path).write_text

    def full_disk(self, data, *args, **kwargs):
        real(self, data[: len(data) // 2], *args, **kwargs)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(type(tmp_path), "write_text", full_disk)
    with pytest.raises(OSError):
        RunLogger(tmp_path, 1)
    monkeypatch.undo()
    assert (tmp_path / rd.METRICS_FILE).read_text() == lines
    logger = RunLogger(tmp_path, 2)
    logger.close()
    assert [json.loads(x)["iteration"] for x in
            (tmp_path / rd.METRICS_FILE).read_text().splitlines()] == [1, 2]


def test_a_tensorboard_flush_on_a_full_disk_does_not_mask_the_error(tmp_path, capsys):
    from gomoku_jax.train.driver import RunLogger

    class FullDisk:
        def close(self):
            raise OSError(28, "No space left on device")

    logger = RunLogger(tmp_path, 0)
    logger.board = FullDisk()
    logger.close()
    assert "TensorBoard events not flushed: [Errno 28]" in capsys.readouterr().err


def test_the_command_line_reports_a_full_disk_outside_a_checkpoint(tmp_path, monkeypatch):
    """A full disk can hit the metrics or the config first: a clean exit all the same."""
    from gomoku_jax.train import driver

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(driver, "train", full)
    with pytest.raises(SystemExit, match=r"error: .*run: \[Errno 28\] No space left on device; "
                                         r"the run stopped, its checkpoints are intact"):
        cli.main(cli_args("gmo", tmp_path / "run"))
