"""`gomoku-jax launch`: run a command as N processes of one multi-process JAX program on
this machine (jax.distributed, a free port on 127.0.0.1 for the coordinator).

    gomoku-jax launch --processes 2 --cpu-devices 2 -- train --preset quick --run-dir runs/q2
    gomoku-jax launch --processes 2 -- train --run-dir runs/q2 --resume

Each process runs `gomoku-jax COMMAND ...` with `JAX_COORDINATOR_ADDRESS`,
`JAX_NUM_PROCESSES` and `JAX_PROCESS_ID` set (what `gomoku-jax train` reads when its
`--coordinator`, `--num-processes` and `--process-id` are absent). Their output comes
through line by line with a `[p0]`, `[p1]`, ... prefix; process 0's progress bar shows
when this command's stderr is a terminal. If a process fails or is killed, the others are
stopped (each has `--grace` seconds to end by itself, then SIGTERM, then SIGKILL) and the
exit status is the failed one's. Ctrl-C stops them all. On Linux a process dies with the
launcher (SIGKILL when it ends, `prctl(PR_SET_PDEATHSIG)`), so none outlives a launcher
that was itself killed.

On several machines there is nothing to launch: run the same `gomoku-jax train` command on
every host with `--coordinator HOST0:PORT --num-processes N --process-id I` (or under
SLURM / Open MPI / a Cloud TPU slice, which set them). `--cpu-devices D` simulates D
devices per process on a CPU (`--xla_force_host_platform_device_count`), to try sharding
on a laptop.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import IO, Optional, Sequence

from gomoku_jax import distributed
from gomoku_jax.progress import FORCE as FORCE_PROGRESS

COMMANDS = ("train",)  # the subcommands that run as several processes


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=2, metavar="N",
                        help="how many processes (default: %(default)s)")
    parser.add_argument("--cpu-devices", type=int, metavar="D",
                        help="run on the CPU with D simulated devices per process")
    parser.add_argument("--port", type=int,
                        help="the coordinator's port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--grace", type=float, default=10.0, metavar="S",
                        help="when one process fails, seconds the others get to end by "
                             "themselves, then after SIGTERM, before SIGKILL (default: "
                             "%(default)s)")
    parser.add_argument("rest", nargs=argparse.REMAINDER, metavar="-- COMMAND ...",
                        help=f"the gomoku-jax command every process runs ({', '.join(COMMANDS)})")
    return parser


def _prctl():
    """libc's prctl, looked up before any fork (a forked child of a threaded process should
    not load libraries); None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()
PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a child between fork and exec (`Popen(preexec_fn=...)`): have the kernel SIGKILL
    it when its parent ends (Linux; elsewhere nothing). The kernel watches the thread that
    forked: the launcher starts its processes from its main thread, which lives as long as
    it does."""
    if _PRCTL is not None:
        _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def child_env(base: dict, coordinator: str, processes: int, index: int,
              cpu_devices: Optional[int], show_progress: bool) -> dict:
    """The environment of process `index`."""
    env = dict(base)
    env.update({distributed.ENV_COORDINATOR: coordinator,
                distributed.ENV_NUM_PROCESSES: str(processes),
                distributed.ENV_PROCESS_ID: str(index), "PYTHONUNBUFFERED": "1"})
    if cpu_devices:
        flags = [f for f in env.get("XLA_FLAGS", "").split()
                 if not f.startswith("--xla_force_host_platform_device_count")]
        env["XLA_FLAGS"] = " ".join(flags + [
            f"--xla_force_host_platform_device_count={cpu_devices}"])
        env["JAX_PLATFORMS"] = "cpu"
    env.pop(FORCE_PROGRESS, None)
    if show_progress and index == 0:
        env[FORCE_PROGRESS] = "1"
    return env


def forward(stream: IO[bytes], prefix: bytes, out: IO[bytes], lock: threading.Lock) -> None:
    """Copy `stream` to `out`, each line (or progress-bar redraw, ended by '\\r') after
    `prefix`."""
    pending = b""
    while True:
        chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
        if not chunk:
            break
        pending += chunk
        while True:
            cut = min((i for i in (pending.find(b"\n"), pending.find(b"\r")) if i >= 0),
                      default=-1)
            if cut < 0:
                break
            piece, end, pending = pending[:cut], pending[cut:cut + 1], pending[cut + 1:]
            with lock:
                out.write((prefix + piece if piece else b"") + end)
                out.flush()
    if pending:
        with lock:
            out.write(prefix + pending + b"\n")
            out.flush()


def describe(code: int) -> str:
    """A process's return code in words: 'exit status 1', 'killed by SIGKILL'."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def stop(procs: Sequence[subprocess.Popen], grace: float) -> None:
    """Stop the processes still running: each gets `grace` seconds to end by itself (one
    that lost a peer fails at its next collective step, with its own message), then
    SIGTERM, then SIGKILL after `grace` seconds more."""
    for signal_them in (None, "terminate", "kill"):
        if signal_them is not None:
            for p in procs:
                if p.poll() is None:
                    getattr(p, signal_them)()
        deadline = time.monotonic() + grace
        while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
            time.sleep(0.05)
    for p in procs:
        p.wait()


def main(args: argparse.Namespace) -> int:
    rest = list(args.rest)
    if rest and rest[0] == "--":
        rest = rest[1:]
    if not rest:
        raise SystemExit("error: give the command after --, e.g. gomoku-jax launch "
                         "--processes 2 -- train --preset quick")
    if rest[0] not in COMMANDS:
        raise SystemExit(f"error: launch runs {', '.join(COMMANDS)} as several processes, "
                         f"not {rest[0]!r} (arena, tournament and the others run on one "
                         f"process)")
    if args.processes < 1:
        raise SystemExit(f"error: --processes must be >= 1, got {args.processes}")
    if args.cpu_devices is not None and args.cpu_devices < 1:
        raise SystemExit(f"error: --cpu-devices must be >= 1, got {args.cpu_devices}")
    if args.port is not None and not 0 < args.port < 65536:
        raise SystemExit(f"error: --port must be in 1..65535, got {args.port}")
    coordinator = f"127.0.0.1:{args.port or free_port()}"
    show = sys.stderr.isatty() and "--no-progress" not in rest
    command = [sys.executable, "-m", "gomoku_jax", *rest]
    out, err = sys.stdout.buffer, sys.stderr.buffer
    lock = threading.Lock()

    def say(text: str) -> None:
        with lock:
            err.write(f"[launch] {text}\n".encode())
            err.flush()

    procs: list[subprocess.Popen] = []
    failed: list[int] = []  # the exit statuses that made the launcher stop the others
    threads: list[threading.Thread] = []
    interrupted = False
    try:
        for i in range(args.processes):
            p = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=child_env(os.environ, coordinator, args.processes, i,
                                               args.cpu_devices, show),
                                 preexec_fn=die_with_parent)
            procs.append(p)
            for stream, sink in ((p.stdout, out), (p.stderr, err)):
                t = threading.Thread(target=forward, args=(stream, f"[p{i}] ".encode(),
                                                           sink, lock), daemon=True)
                t.start()
                threads.append(t)
        say(f"{args.processes} processes, coordinator {coordinator}: "
            + ", ".join(f"p{i} pid {p.pid}" for i, p in enumerate(procs)))
        # poll every process on each pass (`any` over a generator would stop at the first
        # one still running and never see a later one that died)
        while None in [p.poll() for p in procs]:
            failed = [p.returncode for p in procs if p.returncode not in (None, 0)]
            if failed:
                say(f"{failures(procs)}: stopping the other processes")
                stop(procs, args.grace)
                break
            time.sleep(0.1)
    except KeyboardInterrupt:
        interrupted = True
        stop(procs, args.grace)
    for t in threads:
        t.join(timeout=5)
    if interrupted:
        return 130
    codes = [p.returncode for p in procs]
    if not any(codes):
        return 0
    say(f"failed: {failures(procs)}")
    # the cause, among those that failed before the launcher stopped the rest: one killed
    # by a signal, else the first
    cause = failed or [c for c in codes if c]
    code = min(cause) if min(cause) < 0 else cause[0]
    return code if code > 0 else 128 - code


def failures(procs: Sequence[subprocess.Popen]) -> str:
    """'p1 killed by SIGKILL, p0 exit status 1': the processes that ended badly."""
    return ", ".join(f"p{i} {describe(p.returncode)}" for i, p in enumerate(procs)
                     if p.returncode not in (None, 0))
