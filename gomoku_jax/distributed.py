"""Multi-process runs: JAX's multi-controller runtime (`jax.distributed`), one program
sharded over every device of every process.

    distributed.initialize("10.0.0.1:8476", num_processes=2, process_id=0)  # explicit
    distributed.initialize()   # from the cluster's environment; nothing for one process

Every process runs the same command. Process 0's host is the coordinator; once connected,
`jax.devices()` lists the devices of all processes and `jax.local_devices()` this one's, and
a `jax.sharding.Mesh` over `jax.devices()` spans them all. On CPUs the processes talk
through gloo (JAX's default CPU collectives), so `--xla_force_host_platform_device_count`
simulates several devices per process on one machine.

Where the three settings come from, first match wins:
  1. arguments (the CLI's `--coordinator HOST:PORT --num-processes N --process-id I`);
  2. the variables `JAX_COORDINATOR_ADDRESS`, `JAX_NUM_PROCESSES` and `JAX_PROCESS_ID`
     (`gomoku-jax launch` sets them for its processes);
  3. a cluster JAX detects by itself (`jax.distributed.initialize()` with no arguments):
     SLURM (`srun`, more than one task), Open MPI (`mpirun`, more than one process) or a
     multi-host Cloud TPU slice (`TPU_WORKER_HOSTNAMES` naming several hosts).
Otherwise the program is one process and nothing is initialized.

On CPUs a multi-process run compiles without the persistent compilation cache. Gloo gives
the first collective of each group of devices 30 s (not configurable) for every process to
join it. JAX keys a CPU program by its process and writes the cache from process 0 only,
so with the cache process 0 loaded from it what the others compiled afresh, reached a
collective that long before them on a loaded machine and failed ("Gloo context
initialization failed: ... timed out"): every process compiling its own keeps them in
step.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Mapping, Optional

import jax

ENV_COORDINATOR = "JAX_COORDINATOR_ADDRESS"
ENV_NUM_PROCESSES = "JAX_NUM_PROCESSES"
ENV_PROCESS_ID = "JAX_PROCESS_ID"


@dataclasses.dataclass(frozen=True)
class Cluster:
    """Where a multi-process run's settings came from, and those that are known (None:
    left to JAX's detection of `source`)."""

    source: str  # "arguments", "environment", "SLURM", "Open MPI", "Cloud TPU"
    coordinator: Optional[str] = None
    num_processes: Optional[int] = None
    process_id: Optional[int] = None


def parse_address(text: str, what: str = "--coordinator") -> str:
    """`HOST:PORT` checked (ValueError saying what is wrong)."""
    host, sep, port = str(text).strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{what} takes HOST:PORT with a port in 1..65535, got {text!r}")
    return f"{host}:{int(port)}"


def _count(value, what: str, low: int) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ValueError(f"{what} must be an integer, got {value!r}") from None
    if number < low:
        raise ValueError(f"{what} must be >= {low}, got {number}")
    return number


def _explicit(coordinator, num_processes, process_id, names: tuple[str, str, str],
              source: str) -> Cluster:
    given = dict(zip(names, (coordinator, num_processes, process_id)))
    missing = [name for name, value in given.items() if value is None]
    if missing:
        raise ValueError(f"a multi-process run needs all of {', '.join(names)}; missing "
                         f"{', '.join(missing)}")
    n = _count(num_processes, names[1], 1)
    i = _count(process_id, names[2], 0)
    if i >= n:
        raise ValueError(f"{names[2]}={i} must be < {names[1]}={n}")
    return Cluster(source, parse_address(coordinator, names[0]), n, i)


def _detected(environ: Mapping[str, str]) -> Optional[str]:
    """The cluster JAX would find by itself with more than one process in it, or None."""
    def more_than_one(name: str) -> bool:
        try:
            return int(environ.get(name, "1")) > 1
        except ValueError:
            return False

    if "SLURM_JOB_ID" in environ and "SLURM_PROCID" in environ and more_than_one(
            "SLURM_NTASKS"):
        return "SLURM"
    if "OMPI_MCA_orte_hnp_uri" in environ and more_than_one("OMPI_COMM_WORLD_SIZE"):
        return "Open MPI"
    hosts = environ.get("TPU_WORKER_HOSTNAMES", "")
    if len([h for h in hosts.split(",") if h.strip()]) > 1:
        return "Cloud TPU"
    return None


def resolve(coordinator: Optional[str] = None, num_processes: Optional[int] = None,
            process_id: Optional[int] = None,
            environ: Optional[Mapping[str, str]] = None) -> Optional[Cluster]:
    """The run's multi-process settings (see the module docstring), or None for a single
    process; ValueError for incomplete or malformed ones."""
    environ = os.environ if environ is None else environ
    if (coordinator, num_processes, process_id) != (None, None, None):
        return _explicit(coordinator, num_processes, process_id,
                         ("--coordinator", "--num-processes", "--process-id"), "arguments")
    names = (ENV_COORDINATOR, ENV_NUM_PROCESSES, ENV_PROCESS_ID)
    values = [environ.get(name) for name in names]
    if values[0] is not None and not all(v is None for v in values[1:]):
        return _explicit(*values, names, "environment")
    source = _detected(environ)
    if source is not None:
        return Cluster(source, values[0])
    if values[0] is not None:  # JAX's own variable, without ours: let JAX look further
        return Cluster("environment", values[0])
    return None


HEARTBEAT_SECONDS = 100  # JAX's default


def initialize(coordinator: Optional[str] = None, num_processes: Optional[int] = None,
               process_id: Optional[int] = None, *,
               environ: Optional[Mapping[str, str]] = None,
               timeout_seconds: int = 300,
               heartbeat_seconds: int = HEARTBEAT_SECONDS) -> Optional[Cluster]:
    """Connect this process to the others (`jax.distributed.initialize`) when the settings
    (`resolve`) say it is one of several; call it before anything touches a device. Returns
    the settings used, or None when there is nothing to do (one process, or already
    connected). `timeout_seconds`: how long to wait for every process to arrive;
    `heartbeat_seconds`: how long a process may go silent before the others are told it is
    lost (and stop with `ProcessLost`). On a CPU it turns the persistent compilation cache
    off (see the module docstring).

    Raises:
      ValueError: incomplete or malformed settings.
    """
    cluster = resolve(coordinator, num_processes, process_id, environ)
    if cluster is None or cluster.num_processes == 1 or jax.distributed.is_initialized():
        return None
    jax.distributed.initialize(coordinator_address=cluster.coordinator,
                               num_processes=cluster.num_processes,
                               process_id=cluster.process_id,
                               initialization_timeout=timeout_seconds,
                               heartbeat_timeout_seconds=heartbeat_seconds)
    if jax.default_backend() == "cpu":  # see the module docstring
        jax.config.update("jax_enable_compilation_cache", False)
    return cluster


def add_arguments(parser) -> None:
    """`--coordinator`, `--num-processes` and `--process-id` on an argparse parser."""
    group = parser.add_argument_group(
        "several processes (jax.distributed; absent: JAX_COORDINATOR_ADDRESS, "
        "JAX_NUM_PROCESSES, JAX_PROCESS_ID or a SLURM, Open MPI or Cloud TPU cluster, "
        "else one process)")
    group.add_argument("--coordinator", metavar="HOST:PORT",
                       help="process 0's address, the same on every process")
    group.add_argument("--num-processes", metavar="N", help="how many processes in all")
    group.add_argument("--process-id", metavar="I", help="this process's index, 0..N-1")
    group.add_argument("--heartbeat-timeout", metavar="S", type=int, default=HEARTBEAT_SECONDS,
                       help="seconds a process may go silent before the others stop, "
                            "reporting it lost (default: %(default)s, JAX's)")


def from_args(args, timeout_seconds: int = 300) -> Optional[Cluster]:
    """`initialize` with the arguments of `add_arguments`."""
    if args.heartbeat_timeout < 1:
        raise ValueError(f"--heartbeat-timeout must be >= 1, got {args.heartbeat_timeout}")
    return initialize(args.coordinator, args.num_processes, args.process_id,
                      timeout_seconds=timeout_seconds, heartbeat_seconds=args.heartbeat_timeout)
