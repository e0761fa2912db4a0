"""Warm a fresh server up before its first learner arrives, not on their request.

A cold server's first page run did the imports every page run leans on (scikit-learn for the
moons data, SQLAlchemy for the class store, the autograd catalog, ...) and PyTorch's first raised
error (the home page's device check: the first C++ exception also loads its backtrace symbols):
about 5 s of a busy machine's time, in the first learner's wait (bench/cold_start.py, py-spy).

`start()` runs `warm_up` in a daemon thread from the server's lifespan (streamlit_app.py), so it
overlaps the server's start and the browser's loading of Streamlit's own code. The modules are
read from the router's and the pages' own import statements, so a page's new import is warmed
without a list kept here. The pages themselves are not imported: Streamlit executes them as
scripts (a module import would run their `st.` calls outside any session); what they import is
what costs. A first request that arrives during the warm-up waits on the module being imported
(Python's per-module import lock), never imports it twice; and while a page run is under way the
warm-up waits between two imports (`SCRIPT_RUNS.running()`). Without that wait, importing every
page's modules beside the first learner's run took the GIL and a core from it: on the loaded
2-core machine the first page came later with the warm-up than without it (30.3 s against
21.8 s, bench/cold_start.py), which is why a background warm-up of everything can look useless.
With it: 21.1 s against 29.5 s for `/`, 16.4 s against 33.8 s for `/tensor_inspector`
(single runs at load 6-10; docs/performance.md).
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


def _yield_to_page_runs(poll: float = 0.05) -> None:
    from workbench.common.jobs import SCRIPT_RUNS

    while SCRIPT_RUNS.running():
        time.sleep(poll)


def warm_up() -> float:
    """Import what the pages import, and raise PyTorch's first error; the seconds it took."""
    started = time.perf_counter()
    seen: set[str] = set()
    for script in scripts():
        for name in imported_modules(script):
            if name in seen:
                continue
            seen.add(name)
            _yield_to_page_runs()
            try:
                importlib.import_module(name)
            except Exception:           # a page's own run reports its import error
                _LOGGER.exception("warm-up: importing %s failed", name)
    from workbench.common.device import best_device
    from workbench.common.device_checks import cross_device_demo

    _yield_to_page_runs()
    cross_device_demo(best_device())
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
