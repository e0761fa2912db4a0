"""A throwaway PostgreSQL server for the class store's tests and bench/class.py: Debian's
binaries, a fresh cluster in a temporary folder, listening on a free port of 127.0.0.1 only,
stopped and deleted after.

`make test` installs Debian's postgresql (the `postgresql` target), as it does nginx; where the
binaries are missing, starting one fails with a message naming that target (a test fails, never
skips).
As root, PostgreSQL refuses to run: the server runs as the `postgres` user the package creates.
"""
from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

MISSING = ("PostgreSQL's initdb and pg_ctl are missing: `make postgresql` (part of `make test`) "
           "installs Debian's postgresql")


def binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    return Path(found[-1]).parent if found else None


# The data folder of each running throwaway server, by the URL it yielded (for pause/resume).
_DATA_FOLDERS: dict[str, Path] = {}


def server_processes(url: str) -> list[int]:
    """The postmaster of the throwaway server at `url` and every process it started (one backend
    per connection, the checkpointer, the WAL writer ...)."""
    data = _DATA_FOLDERS[url]
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    return [postmaster, *_children(postmaster)]


def _children(parent: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            # "pid (command) state ppid ...": the command may hold spaces, so split after ")".
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == parent:
                found.append(int(stat.parent.name))
    return found


def pause(url: str) -> list[int]:
    """Freeze the server as a hung machine would be (SIGSTOP to all its processes): the kernel
    still accepts connections and acknowledges what is sent, but nothing answers and no
    server-side timeout fires. Returns the stopped processes, for `resume`."""
    stopped = server_processes(url)
    for pid in stopped:
        os.kill(pid, signal.SIGSTOP)
    return stopped


def resume(stopped: list[int]) -> None:
    """Let the processes `pause` stopped run again (SIGCONT)."""
    for pid in stopped:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


def restart(url: str) -> None:
    """Restart the throwaway server at `url` (a fast shutdown: every open connection is cut), as
    a database restarted under a running class; back when this returns."""
    bindir, data = binaries(), _DATA_FOLDERS[url]
    assert bindir is not None
    run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    # pg_ctl restart starts it again with the options it was started with (postmaster.opts).
    subprocess.run([*run_as, str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "-t", "60",
                    "-l", str(data.parent / "server.log"), "restart"],
                   check=True, capture_output=True, timeout=120)


@contextlib.contextmanager
def paused(url: str) -> Iterator[list[int]]:
    """The server frozen for the block, resumed after it whatever happens."""
    stopped = pause(url)
    try:
        yield stopped
    finally:
        resume(stopped)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[str]:
    """Yields a SQLAlchemy URL of an empty database on a server started for the caller."""
    bindir = binaries()
    if bindir is None:
        raise RuntimeError(MISSING)
    as_root = os.geteuid() == 0
    # Not pytest's tmp_path: its folders are private to root, and the server runs as postgres.
    folder = Path(tempfile.mkdtemp(prefix="workbench-pg-"))
    run_as = ["runuser", "-u", "postgres", "--"] if as_root else []
    if as_root:
        shutil.chown(folder, "postgres", "postgres")
    data, port = folder / "data", _free_port()

    def run(*command: str) -> None:
        done = subprocess.run(run_as + list(command), capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise RuntimeError(f"{command[0]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")

    started = False
    try:
        # fsync off and no sync after initdb: a test server's data is thrown away anyway.
        run(str(bindir / "initdb"), "-D", str(data), "-U", "workbench", "-A", "trust", "--no-sync",
            "-E", "UTF8", "--locale=C")
        options = (f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={folder} "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        run(str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "server.log"),
            "-w", "-t", "60", "start")
        started = True
        url = f"postgresql+psycopg://workbench@127.0.0.1:{port}/postgres"
        _DATA_FOLDERS[url] = data
        yield url
    finally:
        _DATA_FOLDERS.pop(f"postgresql+psycopg://workbench@127.0.0.1:{port}/postgres", None)
        if started:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def database_url(database: str) -> Iterator[str]:
    """A throwaway database of the kind named (a PostgreSQL server, or a SQLite file in a
    temporary folder), removed afterwards: the class benchmarks and tests share it."""
    if database == "postgresql":
        with throwaway_postgres() as url:
            yield url
        return
    with tempfile.TemporaryDirectory(prefix="workbench-class-bench-") as folder:
        yield f"sqlite:///{folder}/classroom.sqlite3"
