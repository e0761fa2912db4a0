"""Warm a fresh server up before its first learner arrives, not on their request.

A cold server's first page run paid for the imports every page run leans on (PyTorch 1.2 s,
pandas 0.3 s, SQLAlchemy 0.1 s, the app's own modules) and for PyTorch's first operation on the
`meta` device, which imports its meta kernels and with them sympy and torch._dynamo (1.1 s;
the home page's cross-device demonstration, the tensor inspector's broadcasting check and the
autograd graph's dry runs all use it). Seconds with Python's bytecode cache, on a quiet 2-core
machine.

`start()` runs `warm_up` in a daemon thread from the server's lifespan (streamlit_app.py), so it
overlaps the server's start and the browser's loading of Streamlit's own code (about 1 s between
a healthy server and the first script run). The modules are read from the router's and the
pages' own import statements, so a page's new import is warmed without a list kept here. The
pages themselves are not imported: Streamlit executes them as scripts (a module import would run
their `st.` calls outside any session); what they import is what costs. The router's imports
come first, then the meta device, then every page's imports.

A first request that arrives during the warm-up waits on the module being imported (Python's
per-module import lock), never imports it twice; and while a session's script runs, the
warm-up waits between two imports (`page_run_under_way()`, which counts Streamlit's script
thread from its first line, before the router takes a run slot). Both threads share one GIL:
importing every page's modules beside the first learner's run slowed it (on the loaded 2-core
machine the first page came later with the warm-up than without it, 30.3 s against 21.8 s).
Measured with bench/cold_start.py (docs/performance.md).
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
import logging
import os
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROUTER = ROOT / "router.py"
SWITCH = "WORKBENCH_WARM_UP"            # "0": no warm-up (bench/cold_start.py --no-warm-up)
_LOGGER = logging.getLogger(__name__)


def scripts() -> list[Path]:
    """The router and every page script it can run."""
    from app_pages.navigation import all_pages

    return [ROUTER, *(ROOT / page.script for page in all_pages())]


def imported_modules(script: Path) -> list[str]:
    """The absolute modules a script imports at its top level, in order: `from a.b import c`
    names `a.b` and, where c is a module of that package (`from app_pages.tensor_inspector
    import inspector`), `a.b.c`."""
    tree = ast.parse(script.read_text(encoding="utf-8"), filename=str(script))
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names
                         if _is_module(f"{node.module}.{alias.name}"))
    return names


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):     # `name` is an attribute of a module, not a package
        return False


# Streamlit's name for the thread that executes one session's script runs (and its reruns).
SCRIPT_THREAD = "ScriptRunner.scriptThread"


def page_run_under_way() -> bool:
    """A session's script is running: the router's own imports (before it takes a run slot)
    count as much as a page run in its slot (workbench/common/jobs.py)."""
    from workbench.common.jobs import SCRIPT_RUNS

    return SCRIPT_RUNS.running() > 0 or any(
        thread.name == SCRIPT_THREAD and thread.is_alive() for thread in threading.enumerate())


def _yield_to_page_runs(poll: float = 0.05) -> None:
    while page_run_under_way():
        time.sleep(poll)


def _import(name: str) -> None:
    _yield_to_page_runs()
    try:
        importlib.import_module(name)
    except Exception:                   # a page's own run reports its import error
        _LOGGER.exception("warm-up: importing %s failed", name)


def _first_meta_device_error() -> None:
    """The home page's cross-device demonstration: PyTorch's first operation on the `meta`
    device imports its meta kernels (about 800 modules, 0.9 s), and the first error loads
    what its message needs. The autograd graph's dry runs use the same kernels."""
    from workbench.common.device import best_device
    from workbench.common.device_checks import cross_device_demo

    _yield_to_page_runs()
    cross_device_demo(best_device())


def warm_up() -> float:
    """Import what the pages import, and raise PyTorch's first error; the seconds it took.
    The router's imports come first (every first page run needs them), then the home page's
    meta-device demonstration (the default page), then every page's own imports."""
    started = time.perf_counter()
    seen: set[str] = set()
    router, *pages = scripts()
    for script in (router, None, *pages):
        if script is None:
            _first_meta_device_error()
            continue
        for name in imported_modules(script):
            if name not in seen:
                seen.add(name)
                _import(name)
    return time.perf_counter() - started


def start() -> threading.Thread | None:
    if os.environ.get(SWITCH) == "0":
        return None

    def run() -> None:
        try:
            _LOGGER.info("warm-up done in %.2f s", warm_up())
        except Exception:               # a warm-up must never stop the server
            _LOGGER.exception("warm-up failed")

    thread = threading.Thread(target=run, name="warm_up", daemon=True)
    thread.start()
    return thread
