import os

# The same single-thread setting the app uses, before any test imports torch.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# The page's DataLoader runs stop after 2.5 s; tests compare every batch, so on a busy machine
# they get longer (the stop itself is tested with an explicit limit).
os.environ.setdefault("WORKBENCH_LOADER_SECONDS", "60")
# The class store writes to a SQLite file in data/ by default; the tests (and the servers they
# start, which inherit this) use one in a temporary folder, deleted when the session ends. Each
# pytest-xdist worker makes its own (the workers inherit the controller's variables): one file
# shared by every worker and its servers made their writes wait on each other, and the store
# waits at most a second for a lock before it says the database is locked.
_TEST_DATABASE_OWNER = "WORKBENCH_TEST_DATABASE_OWNER"
_this_process = os.environ.get("PYTEST_XDIST_WORKER", "controller")
if ("WORKBENCH_DATABASE_URL" not in os.environ
        or os.environ.get(_TEST_DATABASE_OWNER, _this_process) != _this_process):
    import atexit
    import shutil
    import tempfile

    _CLASS_DB = tempfile.mkdtemp(prefix="workbench-class-db-")
    atexit.register(shutil.rmtree, _CLASS_DB, ignore_errors=True)
    os.environ["WORKBENCH_DATABASE_URL"] = f"sqlite:///{_CLASS_DB}/classroom.sqlite3"
    os.environ[_TEST_DATABASE_OWNER] = _this_process


# --- The suite leaves no new file in the checkout ------------------------------------------------
# The listing is taken before collection (a test module could write at import) and compared after
# every fixture's teardown; a new file fails the session and is named. See tests/cleantree.py.
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from tests.cleantree import new_files, untracked_files  # noqa: E402
from tests.spawns import SpawnGuard  # noqa: E402

CHECKOUT = Path(__file__).resolve().parent.parent
_BEFORE = pytest.StashKey[set]()


def pytest_sessionstart(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):
        return                 # a pytest-xdist worker: the controller looks, before and after them all
    session.config.stash[_BEFORE] = untracked_files(CHECKOUT)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(_BEFORE, None)
    if before is None:
        return
    left = new_files(before, CHECKOUT)
    if not left:
        return
    message = ("the test session left new files in the checkout (write into tmp_path instead):\n"
               + "\n".join(f"  {path}" for path in left))
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write("\n")
        reporter.write_sep("=", "new files in the checkout", red=True)
        reporter.write_line(message)
    else:
        print(message)
    if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# --- A test that starts another Python is marked `spawns` ---------------------------------------
# `make check` leaves those out; in a run without them, an unmarked test that starts a Python
# fails and names the marker. See tests/spawns.py.
def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(SpawnGuard(), "spawn-guard")


# --- Spreading the tests over pytest-xdist's workers ---------------------------------------------
# `make test` runs `--dist loadgroup`: every test goes to whichever worker is free, except that
# the tests sharing a module-scoped fixture (a server of their own, a training run, an executed
# notebook) form one group, kept on one worker so the fixture is made once. Keeping whole files
# together instead (`--dist loadfile`) left one worker running the longest Chromium file alone
# at the end of a run.
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        definitions = info.name2fixturedefs.values() if info is not None else ()
        if any(definition.scope == "module" for defs in definitions for definition in defs):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
