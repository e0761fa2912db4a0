"""A real `streamlit run streamlit_app.py` on 127.0.0.1, as the end-to-end tests and the
benchmarks start it: the app's one entry, as `make run`, the Dockerfile and Community Cloud start
it, on a free loopback port (never a public address: the tests' servers serve nobody else).

`serve` is a context manager for a test or a benchmark that only needs the server's address;
`Server` is the object the websocket benchmarks keep (its pid for memory readings, a log file,
extra `streamlit run` arguments, a restart after a crash). Both stop the server on exit.
"""
from __future__ import annotations

import contextlib
import os
import resource
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

import psutil

ROOT = Path(__file__).resolve().parents[1]
# The server runs under an address-space cap: a runaway allocation (a link that asks for 20 GB)
# fails the test with a dead server instead of taking the machine down. A healthy server with
# torch, Streamlit and a few worker threads reserves about 2-4 GB of address space.
SERVER_ADDRESS_SPACE = int(os.environ.get("E2E_SERVER_ADDRESS_SPACE", 8 * 2**30))


def cap_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (SERVER_ADDRESS_SPACE, SERVER_ADDRESS_SPACE))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def command(port: int, launcher: str = "streamlit", extra_args: Iterable[str] = ()) -> list[str]:
    """The command line of a server on `port`; `launcher` is the module `python -m` runs
    (tests/e2e/planted.py plants failures)."""
    return [sys.executable, "-m", launcher, "run", "streamlit_app.py", "--server.headless", "true",
            "--server.address", "127.0.0.1", "--server.port", str(port),
            "--browser.gatherUsageStats", "false", *extra_args]


def server_process(base: str) -> psutil.Process:
    """The server at `base`, started by `command`."""
    port = base.rsplit(":", 1)[1].strip("/")
    servers = [process for process in psutil.process_iter(["cmdline"])
               if (line := process.info["cmdline"] or []) and "--server.port" in line[:-1]
               and line[line.index("--server.port") + 1] == port]
    assert len(servers) == 1, f"expected one server on port {port}, found {len(servers)}"
    return servers[0]


@contextlib.contextmanager
def stuttering(base: str, *, frozen: float = 0.5, running: float = 0.1) -> Iterator[None]:
    """The server at `base` as a busy machine runs it: frozen (SIGSTOP) for `frozen` seconds
    of every `frozen + running`, until the block ends. The kernel still takes what a browser
    sends meanwhile, and the server finds several messages at once when it runs again."""
    server = server_process(base)
    done = threading.Event()

    def stutter() -> None:
        while not done.is_set():
            server.suspend()
            done.wait(frozen)
            server.resume()
            done.wait(running)

    thread = threading.Thread(target=stutter, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        server.resume()


def healthy(base: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(base + "/_stcore/health", timeout=timeout) as response:
            return response.read() == b"ok"
    except OSError:
        return False


def wait_healthy(base: str, server: subprocess.Popen, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"streamlit exited with {server.returncode}")
        if healthy(base):
            return
        time.sleep(0.3)
    raise RuntimeError(f"no healthy streamlit at {base} after {timeout}s")


@contextlib.contextmanager
def serve(*, launcher: str = "streamlit", env: dict[str, str] | None = None) -> Iterator[str]:
    """A fresh server on a free loopback port, under the address-space cap, stopped on exit;
    yields its base URL. `env`: variables set for the server only (a class database's URL),
    over this process's."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        command(port, launcher), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, preexec_fn=cap_address_space, env={**os.environ, **(env or {})})
    try:
        wait_healthy(base, server)
        yield base
    finally:
        stop(server)


def stop(process: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL if it has not exited within 15 s."""
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


class Server:
    """A server the caller keeps (a context manager, or `start()`/`stop()`): stopped with its
    children, which a DataLoader forkserver may outlive it as."""

    def __init__(
        self, port: int | None = None, extra_args: Iterable[str] = (), log_path: str | None = None,
    ) -> None:
        self.port = port or free_port()
        self.extra_args = list(extra_args)
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self, timeout: float = 60.0) -> Server:
        self._log = open(self.log_path, "wb") if self.log_path else None
        log = self._log if self._log is not None else subprocess.DEVNULL
        self.process = subprocess.Popen(
            command(self.port, extra_args=self.extra_args), cwd=ROOT, stdout=log,
            stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self.process.returncode}")
            if healthy(self.url, timeout=1.0):
                return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"streamlit not healthy after {timeout:.0f}s")

    def stop(self) -> None:
        if self.process is None:
            return
        children: list[psutil.Process] = []
        with contextlib.suppress(psutil.Error):
            children = psutil.Process(self.process.pid).children(recursive=True)
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        for child in children:  # e.g. the DataLoader forkserver, if it outlived the server
            with contextlib.suppress(psutil.Error):
                child.kill()
        if self._log is not None:
            self._log.close()
            self._log = None
        self.process = None

    def __enter__(self) -> Server:
        return self.start() if self.process is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of a process and its children so far (the server's cost,
    DataLoader workers included), for benchmarks that divide it by a window."""
    process = psutil.Process(pid)
    total = sum(process.cpu_times()[:2])
    for child in process.children(recursive=True):
        with contextlib.suppress(psutil.Error):
            total += sum(child.cpu_times()[:2])
    return total
