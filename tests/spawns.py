"""The `spawns` marker, kept honest: a test that starts another Python says so.

`make check` runs the suite without `spawns` tests (`-m "not spawns"`): each start of a Python
costs seconds (torch is imported again), and those tests were two thirds of the unit and app
tests' time. So that an unmarked one cannot slip back into the inner loop, in a session that
holds no `spawns` (and no `e2e`) test this plugin notes every Python started while a test runs, a
child interpreter (`subprocess` of a python executable, a Jupyter kernel) or a `multiprocessing`
process (DataLoader workers), and fails that test, naming the marker. A session that does hold
`spawns` tests, `make test`'s, is not watched: a process one of them leaves starting in the
background must not fail the next test.
"""
from __future__ import annotations

import functools
import multiprocessing.process
import os
import subprocess
import sys
from pathlib import Path

import pytest

ALLOWED = ("spawns", "e2e")


def starts_python(args, executable=None) -> bool:
    """Whether Popen(args, executable=...) runs a Python interpreter."""
    if executable is None:
        if isinstance(args, (str, bytes, os.PathLike)):
            args = os.fsdecode(args).split()
        executable = args[0] if args else ""
    program = os.fsdecode(executable)
    if Path(program).name.startswith("python"):
        return True
    return os.path.realpath(program) == os.path.realpath(sys.executable)


class SpawnGuard:
    def __init__(self) -> None:
        self._running: pytest.Item | None = None
        self._started: dict[str, list[str]] = {}
        self._originals: list[tuple[object, str, object]] = []

    # --- what is watched ---------------------------------------------------------------------
    def _note(self, what: str) -> None:
        item = self._running
        if item is not None:
            self._started.setdefault(item.nodeid, []).append(what)

    def _install(self) -> None:
        guard = self
        popen_init = subprocess.Popen.__init__
        process_start = multiprocessing.process.BaseProcess.start

        @functools.wraps(popen_init)
        def init(self, args, *rest, **kwargs):
            if starts_python(args, kwargs.get("executable")):
                shown = args if isinstance(args, (str, bytes)) else " ".join(map(str, args))
                guard._note(f"a child Python: {str(shown)[:100]!r}")
            popen_init(self, args, *rest, **kwargs)

        @functools.wraps(process_start)
        def start(self):
            guard._note(f"a multiprocessing process: {type(self).__name__}")
            return process_start(self)

        self._originals = [(subprocess.Popen, "__init__", popen_init),
                           (multiprocessing.process.BaseProcess, "start", process_start)]
        subprocess.Popen.__init__ = init
        multiprocessing.process.BaseProcess.start = start

    # --- hooks -------------------------------------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not any(item.get_closest_marker(name) for item in session.items for name in ALLOWED):
            self._install()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem):
        self._running = item
        try:
            return (yield)
        finally:
            self._running = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = yield
        started = self._started.pop(item.nodeid, None)
        if started and report.passed:
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} started another Python, which costs seconds:\n  "
                + "\n  ".join(started)
                + "\nMark it @pytest.mark.spawns (make check leaves those out; make test runs them).")
        return report

    def pytest_unconfigure(self) -> None:
        for owner, name, original in reversed(self._originals):
            setattr(owner, name, original)
        self._originals = []


def pytest_configure(config: pytest.Config) -> None:
    """As a plugin of its own (`-p tests.spawns`); tests/conftest.py registers the guard itself."""
    config.pluginmanager.register(SpawnGuard(), "spawn-guard")
