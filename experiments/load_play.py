"""The play server under load: N simulated people at once, each playing whole games against
the default agents on mixed configs through real HTTP (loopback), then 10,000 games created
and abandoned. The server is `gomoku-jax play` in a process of its own (started on a free
port, stopped at the end), so its latency and memory are the server's, not the clients'.

    python experiments/load_play.py                          # N = 1, 8, 32; 10,000 abandoned
    python experiments/load_play.py --people 4 --games 1 --moves 5 --abandon 200

A person (a thread of this process, with a keep-alive connection) starts a game on the
next config of `--configs` (Gomoku sizes, Faux Go with several komi: one compiled config
serves every komi), then, until the game ends or `--moves` moves: thinks `--think-ms`
(uniform in [0.5, 1.5] x), plays a random legal move and polls the game every `--poll-ms`
(the page's 100 ms by default) until the AI's stone is there; that wait is the latency. A
429 (the server refusing a new config with a reason) is counted apart from errors and
retried after its Retry-After. Bounded: each phase stops starting moves after
`--max-seconds`. The configs are compiled before the phases (their time is reported apart).
Table: throughput, latency percentiles, errors, refusals, the server process's peak and
current RSS (VmHWM / VmRSS of its /proc/<pid>/status).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from typing import Iterator, Optional, Sequence

import numpy as np

from gomoku_jax import progress
from gomoku_jax.benchmarks.timing import describe_machine
from gomoku_jax.markdown import table as markdown_table
from gomoku_jax.web.server import free_port

CONFIGS = ("gomoku:15,gomoku:9,fauxgo:9:0.5,gomoku:11,fauxgo:9:2.5,fauxgo:9:5.5,"
           "fauxgo:9:7.5")


def parse_configs(text: str) -> list[dict]:
    """"gomoku:15,fauxgo:9:0.5" -> new-game bodies."""
    out = []
    for item in text.split(","):
        game, size, *komi = item.strip().split(":")
        body = {"game": game, "board_size": int(size)}
        if komi:
            body["komi"] = float(komi[0])
        out.append(body)
    return out


def memory_kb(pid: int) -> dict:
    """{"VmHWM": peak kB, "VmRSS": current kB} of process `pid` (Linux)."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                out[key] = int(value.split()[0])
    return out


class Client:
    """A keep-alive HTTP connection to the server: `call(method, path, body)` ->
    (status, JSON, headers)."""

    def __init__(self, url: str):
        host, port = url.split("//")[1].strip("/").rsplit(":", 1)
        self.conn = http.client.HTTPConnection(host, int(port), timeout=600)

    def call(self, method: str, path: str, body: Optional[dict] = None):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data else {}
        try:
            self.conn.request(method, path, body=data, headers=headers)
            r = self.conn.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            # The server closed the idle connection (uvicorn's keep-alive timeout, 5 s)
            # before reading the request: reconnect once.
            self.conn.close()
            self.conn.request(method, path, body=data, headers=headers)
            r = self.conn.getresponse()
        return r.status, json.loads(r.read()), dict(r.getheaders())

    def close(self) -> None:
        self.conn.close()


class Server:
    """`gomoku-jax play` in a process of its own: `url`, `pid`, `memory()` (kB)."""

    def __init__(self, url: str, process: subprocess.Popen):
        self.url, self.process, self.pid = url, process, process.pid

    def memory(self) -> dict:
        if self.process.poll() is not None:
            raise RuntimeError(f"the server exited with {self.process.returncode}")
        return memory_kb(self.pid)


def server_command(args, port: int) -> list[str]:
    command = [sys.executable, "-m", "gomoku_jax", "play", "--host", "127.0.0.1",
               "--port", str(port), "--ms-per-move", str(args.ms_per_move),
               "--max-games", str(args.max_games), "--max-configs", str(args.max_configs),
               "--seed", str(args.seed)]
    return command + (["--agent", args.agent] if args.agent else [])


def _tail(path: str, chars: int = 4000) -> str:
    with open(path, errors="replace") as f:
        return f.read()[-chars:]


@contextlib.contextmanager
def serve(args) -> Iterator[Server]:
    """Start the server, wait until GET /api/config answers (SystemExit with its stderr when
    it exits or `--start-timeout` passes first), stop it at the end (SIGTERM, then SIGKILL)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    with tempfile.TemporaryDirectory() as tmp:
        err = os.path.join(tmp, "stderr")
        command = server_command(args, port)
        print("starting the server: " + " ".join(command[1:]), file=sys.stderr, flush=True)
        with open(err, "w") as err_file:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=err_file)
        try:
            deadline = time.monotonic() + args.start_timeout
            while True:
                if process.poll() is not None:
                    raise SystemExit(f"error: the server exited with {process.returncode} "
                                     f"before answering:\n{_tail(err)}")
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                    conn.request("GET", "/api/config")
                    if conn.getresponse().status == 200:
                        conn.close()
                        break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit(f"error: the server did not answer on {url} within "
                                     f"{args.start_timeout:g} s:\n{_tail(err)}")
                time.sleep(0.1)
            yield Server(url, process)
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.returncode not in (0, -15):
                print(f"the server's stderr:\n{_tail(err)}", file=sys.stderr)


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.latencies_ms: list[float] = []
        self.games = self.refused = 0
        self.errors: list[str] = []

    def error(self, text: str) -> None:
        with self.lock:
            self.errors.append(text)


def person(url: str, index: int, configs: list[dict], args, deadline: float, stats: Stats,
           tick) -> None:
    """One simulated person: whole games until `args.games` or the deadline. Any failure
    (an error answer, a dropped connection, a malformed view) is an error in `stats`."""
    rng = random.Random(index)
    client = Client(url)
    try:
        for g in range(args.games):
            if time.monotonic() > deadline or not play_game(client, rng, index + g, configs,
                                                            args, deadline, stats, tick):
                return
    except Exception as e:  # a thread's failure must reach the table
        stats.error(f"person {index}: {e!r}")
    finally:
        client.close()


def play_game(client: Client, rng: random.Random, k: int, configs: list[dict], args,
              deadline: float, stats: Stats, tick) -> bool:
    """One game on config `k`; False after an error (recorded in `stats`)."""
    body = {**configs[k % len(configs)], "colour": rng.choice(["black", "white"])}
    status, view, headers = client.call("POST", "/api/games", body)
    while status == 429 and time.monotonic() < deadline:
        with stats.lock:
            stats.refused += 1
        time.sleep(min(float(headers.get("retry-after", 1)), 5.0))
        status, view, headers = client.call("POST", "/api/games", body)
    if status != 201:
        stats.error(f"new game {body}: {status} {view}")
        return False
    game = f"/api/games/{view['id']}"
    try:
        view = wait_turn(client, game, len(view["moves"]), args.poll_ms)
        for _ in range(args.moves):
            if view["over"] or time.monotonic() > deadline:
                break
            time.sleep(args.think_ms / 1000 * rng.uniform(0.5, 1.5))
            action = rng.choice(np.flatnonzero(view["legal"]).tolist())
            t0 = time.perf_counter()
            status, view, _ = client.call("POST", f"{game}/move", {"action": action})
            if status != 200:
                stats.error(f"move {action}: {status} {view}")
                return False
            plies = len(view["moves"])
            if view["over"]:
                break
            view = wait_turn(client, game, plies, args.poll_ms)
            with stats.lock:
                stats.latencies_ms.append(1000 * (time.perf_counter() - t0))
            tick(1)
    except RuntimeError as e:
        stats.error(str(e))
        return False
    with stats.lock:
        stats.games += 1
    client.call("DELETE", game)
    return True


def wait_turn(client: Client, game: str, plies: int, poll_ms: float) -> dict:
    """The game's view once the AI has replied to the position with `plies` moves (or it
    is the person's turn, or over)."""
    while True:
        status, view, _ = client.call("GET", game)
        if status != 200:
            raise RuntimeError(f"poll: {status} {view}")
        if view["ai"]["status"] == "error":
            raise RuntimeError(f"AI error: {view['ai']['message']}")
        if view["over"] or view["your_turn"] and len(view["moves"]) >= plies:
            return view
        time.sleep(poll_ms / 1000)


def phase(server: Server, people: int, configs: list[dict], args, enabled: bool) -> list:
    stats = Stats()
    deadline = time.monotonic() + args.max_seconds
    with progress.bar(people * args.games * args.moves, f"{people} people", "move",
                      enabled=enabled) as bar:
        lock = threading.Lock()

        def tick(n):
            with lock:
                bar.update(n)

        t0 = time.perf_counter()
        threads = [threading.Thread(target=person, args=(server.url, i, configs, args,
                                                         deadline, stats, tick), daemon=True)
                   for i in range(people)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
    lat = np.asarray(stats.latencies_ms) if stats.latencies_ms else np.zeros(1)
    mem = server.memory()
    for e in stats.errors[:5]:
        print(f"error ({people} people): {e}", file=sys.stderr)
    return [str(people), str(len(stats.latencies_ms)), str(stats.games), f"{wall:,.1f}",
            f"{len(stats.latencies_ms) / wall:,.2f}", f"{stats.games / wall:,.3f}",
            *(f"{np.percentile(lat, q):,.0f}" for q in (50, 95, 99)), str(len(stats.errors)),
            str(stats.refused), f"{mem['VmHWM'] / 1024:,.0f}", f"{mem['VmRSS'] / 1024:,.0f}"]


def run_threads(url: str, count: int, threads: int, work, label: str,
                enabled: bool) -> int:
    """`work(client, i)` for i in range(count) on `threads` keep-alive clients; the number
    of calls that raised (the first few printed)."""
    failures: list[str] = []
    with progress.bar(count, label, "game", enabled=enabled) as bar:
        lock = threading.Lock()

        def loop(k):
            client = Client(url)
            for i in range(k, count, threads):
                try:
                    work(client, i)
                except Exception as e:  # counted as an error
                    with lock:
                        failures.append(f"{label} {i}: {e!r}")
                    client.close()
                with lock:
                    bar.update(1)
            client.close()

        pool = [threading.Thread(target=loop, args=(k,)) for k in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    for f in failures[:5]:
        print(f"error: {f}", file=sys.stderr)
    return len(failures)


def abandon(server: Server, count: int, configs: list[dict], threads: int,
            enabled: bool) -> tuple[list[float], int, int]:
    """Create `count` games and never play them; the server's RSS (MB) before, every tenth
    and after, the errors, and how many of them are live after (a GET of each)."""
    samples = [server.memory()["VmRSS"] / 1024]
    ids: list[Optional[str]] = [None] * count
    errors, live = [0], [0]
    lock = threading.Lock()
    every = max(count // 10, 1)

    def create(client, i):
        status, view, _ = client.call("POST", "/api/games", configs[i % len(configs)])
        with lock:
            errors[0] += status != 201
            if status == 201:
                ids[i] = view["id"]
            if (i + 1) % every == 0:
                samples.append(server.memory()["VmRSS"] / 1024)

    def count_live(client, i):
        if ids[i] is not None:
            status, _, _ = client.call("GET", f"/api/games/{ids[i]}")
            with lock:
                live[0] += status == 200

    errors[0] += run_threads(server.url, count, threads, create, "abandoned games", enabled)
    samples.append(server.memory()["VmRSS"] / 1024)
    errors[0] += run_threads(server.url, count, threads, count_live, "counting live games",
                             enabled)
    return samples, errors[0], live[0]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--people", default="1,8,32", help="N of each phase, comma-separated")
    parser.add_argument("--games", type=int, default=2, help="games per person")
    parser.add_argument("--moves", type=int, default=15, help="a person's moves per game at most")
    parser.add_argument("--configs", default=CONFIGS,
                        help="game:size[:komi],... (default %(default)s)")
    parser.add_argument("--think-ms", type=float, default=300.0,
                        help="a person's mean time to think (default %(default)s)")
    parser.add_argument("--poll-ms", type=float, default=100.0,
                        help="a person's polling interval (default %(default)s, the page's)")
    parser.add_argument("--max-seconds", type=float, default=240.0, help="per phase")
    parser.add_argument("--abandon", type=int, default=10_000,
                        help="games created and abandoned in the last phase (0: none)")
    parser.add_argument("--start-timeout", type=float, default=120.0,
                        help="seconds for the server to answer (default %(default)s)")
    server = parser.add_argument_group("the server's flags (`gomoku-jax play`)")
    server.add_argument("--agent", help="an agent spec for every game (default: the defaults)")
    server.add_argument("--ms-per-move", type=float, default=50.0,
                        help="the search agents' time a move (default %(default)s)")
    server.add_argument("--max-games", type=int, default=64, help="default %(default)s")
    server.add_argument("--max-configs", type=int, default=8, help="default %(default)s")
    server.add_argument("--seed", type=int, default=0)
    progress.add_argument(parser)
    return parser


def compile_configs(server: Server, configs: list[dict], enabled: bool) -> list[list[str]]:
    """One game on each config as White (the AI's first move compiles its seat): the
    rows of the compile table."""
    rows = []
    client = Client(server.url)
    with progress.bar(len(configs), "compiling configs", "config", enabled=enabled) as bar:
        for body in configs:
            t0 = time.perf_counter()
            rss0 = server.memory()["VmRSS"]
            status, view, _ = client.call("POST", "/api/games", {**body, "colour": "white"})
            if status != 201:
                raise SystemExit(f"error: {body}: {status} {view}")
            wait_turn(client, f"/api/games/{view['id']}", 1, 50)
            rows.append([json.dumps(body), view["ai"]["agent"],
                         f"{time.perf_counter() - t0:,.1f}",
                         f"{(server.memory()['VmRSS'] - rss0) / 1024:,.0f}"])
            client.call("DELETE", f"/api/games/{view['id']}")
            bar.update(1)
    client.close()
    return rows


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    configs = parse_configs(args.configs)
    people = [int(n) for n in args.people.split(",")]
    enabled = not args.no_progress
    with serve(args) as server:
        before = server.memory()["VmRSS"]
        compile_rows = compile_configs(server, configs, enabled)
        warm = server.memory()["VmRSS"]
        rows = [phase(server, n, configs, args, enabled) for n in people]
        samples, abandon_errors, live = (abandon(server, args.abandon, configs, 4, enabled)
                                         if args.abandon else ([], 0, 0))
        peak = server.memory()["VmHWM"]
    print(f"# The play server under load: {len(configs)} configs, "
          f"{args.agent or 'the default agents'} ({args.ms_per_move:g} ms a search move), "
          f"think {args.think_ms:g} ms, poll {args.poll_ms:g} ms; the server in its own "
          f"process\n")
    print(describe_machine())
    print()
    print(markdown_table(["config (first game)", "agent", "compile + first AI move s",
                          "server RSS added MB"], compile_rows))
    print(f"\nThe server's RSS before compiling {before / 1024:,.0f} MB, after "
          f"{warm / 1024:,.0f} MB\n")
    print(markdown_table(["people", "AI moves", "games", "wall s", "moves/s", "games/s",
                          "p50 ms", "p95 ms", "p99 ms", "errors", "429 refused",
                          "server peak RSS MB", "server RSS MB"], rows))
    if samples:
        print(f"\n{args.abandon:,} games created and abandoned ({abandon_errors} errors; "
              f"{live} live after, max_games {args.max_games}): the server's RSS MB "
              + " -> ".join(f"{s:,.0f}" for s in samples)
              + f"; its peak RSS {peak / 1024:,.0f} MB")
    failed = sum(int(r[9]) for r in rows) + abandon_errors
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
