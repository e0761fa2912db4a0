"""Where DataLoader worker processes come from, and what each runs as it starts.

Workers are started by "forkserver": forking a threaded web server can deadlock, forking a
clean, single-threaded server process cannot. Everything a worker needs (the dataset, the
collate function, `seed_worker`, the bucket batch sampler) is defined at module level in
`workbench.batch_iterator`, so it can be pickled into the worker by name.

One piece here is not ours: `_ScriptSafePopen._launch` is a copy of a private CPython method,
changed in two lines. `tests/unit/batch_iterator/test_workers.py` pins the original (by the SHA-256
below) and checks that the copy differs from it in those two lines only, so a Python upgrade
that changes the original fails the suite instead of silently running stale code.
"""
from __future__ import annotations

import io
import multiprocessing
import os
from multiprocessing import context as mp_context
from multiprocessing import forkserver, reduction, spawn, util
from multiprocessing.context import set_spawning_popen

import numpy as np
from torch.utils.data import get_worker_info

# The modules the forkserver imports once, so that each worker is a cheap fork with torch and
# everything a pickled dataset or function names already loaded.
PRELOAD = ["workbench.batch_iterator.runs"]

# What `_ScriptSafePopen._launch` copies: CPython's
# Lib/multiprocessing/popen_forkserver.py, `Popen._launch`, as of Python 3.11.7, and the SHA-256
# of its source (`textwrap.dedent(inspect.getsource(Popen._launch))`) in each Python version
# the copy was checked against. Add a version only after re-reading the copy against it.
COPIED_METHOD = "multiprocessing.popen_forkserver.Popen._launch"
CHECKED_SOURCES_SHA256 = {
    "3.11.7": "38073e9ebebe4d76b73db4ebec979f9be7e2c3af378a65b5d4f020d35a8bdc7c",
}
# The statements the copy adds to the original (nothing else differs).
ADDED_LINES = ('prep_data.pop("init_main_from_path", None)',
               'prep_data.pop("init_main_from_name", None)')


def seed_worker(worker_id: int) -> None:
    """worker_init_fn: give this worker's copy of the dataset its own NumPy generator.

    `get_worker_info().seed` is base_seed + worker_id: different per worker and per epoch.
    """
    info = get_worker_info()
    if info is not None and getattr(info.dataset, "rng", None) is not None:
        info.dataset.rng = np.random.default_rng(info.seed % 2**32)


# Worker processes run at the lowest CPU priority, below the server's training threads
# (workbench/common/jobs.py runs those JOB_NICENESS = 10 levels down). Forked at the server's own
# priority, two tabs' workers took the cores from ten learners' training threads, which kept
# 0.21-0.54 of their pace (bench/hostile_neighbour.py, the workers case): a nice-0 process
# weighs about nine times a nice-10 thread. Down here they use what training leaves, and a
# run's batches still come: the run's own thread in the server consumes them only during its
# scheduler turn. The server lowers each worker as soon as the forkserver names its pid, before
# the worker has unpickled anything, so its start-up runs down here too.
WORKER_NICENESS = 19


def lower_process_priority(pid: int, niceness: int = WORKER_NICENESS) -> None:
    """Set process `pid`'s nice value (its main thread's, on Linux) to at least `niceness`.
    Lowering one's own child needs no privilege; where nice values do not exist, or a sandbox
    forbids it, the process keeps its priority."""
    if not hasattr(os, "setpriority"):          # Windows
        return
    try:
        if os.getpriority(os.PRIO_PROCESS, pid) < niceness:
            os.setpriority(os.PRIO_PROCESS, pid, niceness)
    except OSError:
        pass


try:
    from multiprocessing.popen_forkserver import Popen as _ForkServerPopen
except ImportError:  # Windows: no forkserver; workers are spawned instead
    _ForkServerPopen = object  # type: ignore[assignment,misc]


class _ScriptSafePopen(_ForkServerPopen):  # type: ignore[misc,valid-type]
    """Starts a worker from the forkserver without re-running the parent's main script.

    Why a copy: inside Streamlit, `sys.modules["__main__"]` is the app script, so
    multiprocessing would run the whole app again in every worker before it could load a batch
    (and AppTest's router fails there). CPython offers no hook to leave the main module out of
    the preparation data, so this is CPython 3.11.7's `popen_forkserver.Popen._launch`, verbatim,
    with the two `prep_data.pop(...)` lines added: the workers need only the importable
    `workbench` modules their pickled dataset and functions name.
    """

    def _launch(self, process_obj):
        prep_data = spawn.get_preparation_data(process_obj._name)
        prep_data.pop("init_main_from_path", None)
        prep_data.pop("init_main_from_name", None)
        buf = io.BytesIO()
        set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            set_spawning_popen(None)

        self.sentinel, w = forkserver.connect_to_new_process(self._fds)
        # Keep a duplicate of the data pipe's write end as a sentinel of the
        # parent process used by the child process.
        _parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds,
                                       (_parent_w, self.sentinel))
        with open(w, 'wb', closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _WorkerProcess(getattr(mp_context, "ForkServerProcess", mp_context.Process)):  # type: ignore[misc]
    @staticmethod
    def _Popen(process_obj):  # noqa: N802 (the name multiprocessing calls)
        popen = _ScriptSafePopen(process_obj)
        lower_process_priority(popen.pid)
        return popen


class WorkerContext(getattr(mp_context, "ForkServerContext", mp_context.BaseContext)):  # type: ignore[misc]
    """forkserver: workers are forks of a clean, single-threaded server process, never of
    the threaded web server (forking that can deadlock)."""

    Process = _WorkerProcess


def worker_context() -> multiprocessing.context.BaseContext:
    """Where DataLoader worker processes come from (forkserver; spawn where it is missing)."""
    if _ForkServerPopen is not object and "forkserver" in multiprocessing.get_all_start_methods():
        context = WorkerContext()
        # The server imports torch and these modules once; each worker is a cheap fork of it.
        context.set_forkserver_preload(PRELOAD)
        return context
    return multiprocessing.get_context("spawn")
