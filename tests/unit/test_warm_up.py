"""The server's warm-up (app_pages/warm_up.py): what it imports, and that it yields to page runs."""
from __future__ import annotations

import importlib.util

from app_pages import warm_up
from workbench.common.jobs import SCRIPT_RUNS, RunSlots


def test_it_warms_what_the_router_and_every_page_import():
    names = {name for script in warm_up.scripts() for name in warm_up.imported_modules(script)}
    assert {"app_pages.navigation", "components.sidebar", "components.knowledge_check"} <= names
    assert "app_pages.tensor_inspector.inspector" in names      # a tool page's own module
    missing = [name for name in names if importlib.util.find_spec(name) is None]
    assert not missing
    assert not any(name.startswith("app_pages.") and name.endswith(".page") for name in names), \
        "pages are scripts, not imported"


def test_a_run_under_way_is_counted_once_and_the_warm_up_waits_for_it(monkeypatch):
    slots = RunSlots(2)
    with slots.run():
        with slots.run():                       # a fragment inside its page's run
            assert slots.running() == 1
    assert slots.running() == 0
    waits = []

    def sleep(seconds: float) -> None:          # the run ends while the warm-up waits
        waits.append(seconds)
        context.__exit__(None, None, None)

    monkeypatch.setattr(warm_up.time, "sleep", sleep)
    context = SCRIPT_RUNS.run()
    context.__enter__()
    warm_up._yield_to_page_runs()
    assert len(waits) == 1 and SCRIPT_RUNS.running() == 0


def test_it_can_be_switched_off(monkeypatch):
    monkeypatch.setenv(warm_up.SWITCH, "0")
    assert warm_up.start() is None


def test_a_script_thread_counts_as_a_run_before_it_takes_a_slot(monkeypatch):
    """The router imports the first page's modules before it takes a run slot: the warm-up
    must already give way then, or both threads import at once and share one GIL."""
    import threading

    assert not warm_up.page_run_under_way()
    leave = threading.Event()
    thread = threading.Thread(target=leave.wait, name=warm_up.SCRIPT_THREAD)
    thread.start()
    try:
        assert warm_up.page_run_under_way()
    finally:
        leave.set()
        thread.join()
    assert not warm_up.page_run_under_way()


def test_the_router_comes_first_then_the_meta_device_then_the_pages(monkeypatch):
    done: list[str] = []
    monkeypatch.setattr(warm_up, "_import", done.append)
    monkeypatch.setattr(warm_up, "_first_meta_device_error", lambda: done.append("meta"))
    warm_up.warm_up()
    router = warm_up.imported_modules(warm_up.ROUTER)
    meta = done.index("meta")
    assert done[:meta] == list(dict.fromkeys(router))
    assert "app_pages.tensor_inspector.inspector" in done[meta + 1:]
