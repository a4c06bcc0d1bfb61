"""One writer per run directory: `run_lock(run_dir)` holds an exclusive `fcntl.flock` on
`run_dir/.lock` while a run trains in it. The kernel drops the lock when its process ends,
however it ends (kill -9 included), so a killed run never leaves a stale lock; the file
itself stays, with the last holder's pid and host, for the message a second run gets."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pathlib
import socket
from typing import Iterator

LOCK_FILE = ".lock"


class RunDirBusy(ValueError):
    """Another process is training in the run directory."""


@contextlib.contextmanager
def run_lock(run_dir: pathlib.Path) -> Iterator[None]:
    """Hold `run_dir`'s lock for the block (creating the directory); RunDirBusy, naming
    the holder, when another process holds it."""
    run_dir = pathlib.Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            raise RunDirBusy(f"{run_dir} is in use by a training run ({holder}); two runs "
                             f"must not write one run directory: wait for it to end, stop "
                             f"it, or use another --run-dir") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock
