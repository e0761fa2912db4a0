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
        yield f"postgresql+psycopg://workbench@127.0.0.1:{port}/postgres"
    finally:
        if started:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)
