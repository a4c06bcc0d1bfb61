"""Serving the web UI's app with uvicorn: in the foreground (`gomoku-jax play`) or on a
background thread (the browser test, the latency benchmark).

    with background(app) as url:          # http://127.0.0.1:<a free port>
        httpx.get(url + "api/config")
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Iterator

import uvicorn


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def url_of(host: str, port: int) -> str:
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


@contextlib.contextmanager
def background(app, host: str = "127.0.0.1", port: int = 0,
               timeout_s: float = 30.0) -> Iterator[str]:
    """Serve `app` on a daemon thread until the block ends; yields its URL (a free port
    when `port` is 0). RuntimeError when the server does not start within `timeout_s`."""
    port = port or free_port(host)
    # log_config=None: uvicorn leaves the process's logging alone (its own config would
    # bind handlers to whatever sys.stderr is now, e.g. a test's capture, closed later).
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                           log_config=None, lifespan="on"))
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"the web server did not start on {host}:{port}")
        time.sleep(0.01)
    try:
        yield url_of(host, port)
    finally:
        server.should_exit = True
        thread.join(timeout_s)
