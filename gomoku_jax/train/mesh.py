"""The devices a training run shards over: a 1-D mesh, axis "data", over the devices of
every process (`gomoku_jax.distributed`), and the two shardings the trainers use.

The trainers write their iteration for the global batch; self-play boards and training
batches are constrained to `data` (split along their first axis), everything else to
`replicated`, and XLA partitions the program (GSPMD), inserting the all-reduces. On several
processes each computes only the shards of its own devices: nothing is fed from the host.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

AXIS = "data"


def make_mesh(num_devices: int = 0) -> jax.sharding.Mesh:
    """A 1-D mesh, axis "data", over the first `num_devices` devices (0: all of them, of
    every process). A multi-process run uses all of them.

    Raises:
      ValueError: more devices than there are, or a subset on several processes.
    """
    devices = jax.devices()
    if num_devices > len(devices):
        raise ValueError(f"run.devices={num_devices} but only {len(devices)} device(s) "
                         f"are available")
    if jax.process_count() > 1 and num_devices not in (0, len(devices)):
        raise ValueError(f"run.devices={num_devices}: a run of {jax.process_count()} "
                         f"processes shards over all {len(devices)} devices; set "
                         f"run.devices=0")
    chosen = np.asarray(devices[:num_devices or len(devices)])
    return jax.sharding.Mesh(chosen, (AXIS,))


class Placement:
    """A run's mesh and its shardings: `replicated` (a copy on every device) and `data`
    (the leading axis split over the devices)."""

    def __init__(self, mesh: jax.sharding.Mesh):
        self.mesh = mesh
        self.replicated = NamedSharding(mesh, P())
        self.data = NamedSharding(mesh, P(AXIS))

    @property
    def size(self) -> int:
        return self.mesh.devices.size

    def check_divides(self, values: dict[str, int]) -> None:
        """ValueError unless every value of {config key: value} is a multiple of the number
        of devices."""
        for name, value in values.items():
            if value % self.size:
                raise ValueError(f"{name}={value} must be a multiple of the {self.size} "
                                 f"devices")

    @staticmethod
    def constrain(tree: Any, sharding: NamedSharding) -> Any:
        """`tree` with every leaf constrained to `sharding` (inside jit)."""
        return jax.tree.map(lambda x: jax.lax.with_sharding_constraint(x, sharding), tree)
