"""Turn on JAX's persistent compilation cache, so compiled programs survive the process."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import jax

ENV_VAR = "GOMOKU_JAX_CACHE_DIR"


def default_cache_dir() -> Path:
    """$GOMOKU_JAX_CACHE_DIR, else $XDG_CACHE_HOME/gomoku_jax/xla, else ~/.cache/gomoku_jax/xla."""
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "gomoku_jax" / "xla"


def enable(cache_dir: Optional[str | os.PathLike] = None,
           min_compile_seconds: float = 0.5) -> Path:
    """Cache every compilation taking longer than `min_compile_seconds` under `cache_dir`."""
    path = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    path.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", min_compile_seconds)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return path
