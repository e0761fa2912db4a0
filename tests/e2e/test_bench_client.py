"""The benchmarks' Streamlit protocol client (harness/st_client.py) against a real server: if
Streamlit's protocol or the app's pages change under it, this fails before a benchmark quietly
measures nothing."""
from __future__ import annotations

import asyncio
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from harness.app import Server
from harness.st_client import Session, follow_frames, number_state

pytestmark = pytest.mark.e2e
EPOCH = re.compile(r"Epoch (\d+) / ")


def _epoch(status: str) -> int:
    match = EPOCH.search(status)
    return int(match[1]) if match else -1


async def _a_learner(url: str) -> dict:
    seen: dict = {}
    async with Session(url, "moons_trainer", "n=600&epochs=200&batch=16", run_timeout=120) as session:
        first = await session.open()
        seen["first"] = first
        seen["lr"] = await session.set_value("mt_lr", number_state(session, "mt_lr", 0.01))
        seen["play"] = await session.click("mt_play")
        seen["poll_url"] = session.poll_url
        statuses: list[str] = []
        await follow_frames(session, time.monotonic() + 60,
                            lambda status: statuses.append(status) or _epoch(status) >= 2)
        seen["statuses"] = statuses
        seen["pause"] = await session.click("mt_pause")
    return seen


def test_the_bench_client_opens_a_page_trains_and_follows_the_frames():
    with Server() as server:
        # A loop of its own in a thread of its own: after the Chromium tests, Playwright's sync
        # API keeps an event loop running in this thread.
        with ThreadPoolExecutor(1) as pool:
            seen = pool.submit(asyncio.run, _a_learner(server.url)).result(timeout=300)
    for step in ("first", "lr", "play", "pause"):
        result = seen[step]
        assert result.finished and not result.guard_panel and not result.exceptions, (step, result)
    assert seen["first"].has_text("Epoch 0 / 200")
    assert seen["poll_url"] and seen["poll_url"].startswith("api/frames/")
    assert max(map(_epoch, seen["statuses"])) >= 2, seen["statuses"][-3:]


def test_the_class_benchmark_runs_a_small_class_end_to_end():
    """`python -m bench.class` with three learners on SQLite: every answer counted by the board, every
    follower arrived at both sends, every learner's run posted, no error; then, small, the Class
    page's cost with an empty and a full board. Its other two phases each start servers of their
    own and are left out here (about a minute of a loaded suite's time): the sweep is
    harness/class_sweep.py's scenario, which tests/e2e/test_class_sweep.py runs with nine
    learners, and the locked-SQLite probe runs in `make bench-all`."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "bench.class", "--learners", "3", "--databases",
                           "sqlite", "--follow-seconds", "2", "--after", "0",
                           "--board-viewers", "2", "--board-window", "2",
                           "--no-faults", "--sweep-learners"], cwd=root,
                          capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "== class of 3 learners, sqlite" in out, out
    assert "== a sweep" not in out and "followers, load average" not in out, out
    assert "runs posted: 3 learners told, 3 on the board" in out, out
    # The choice and the commit rerun the check's fragment, not the page, as in a browser.
    assert "answering ran the check's fragment alone: 6 of 6 clicks" in out, out
    assert "errors: 0, answers or arrivals never seen: 0" in out, out
    assert re.search(r"board counted them: p50 [\d.]+ s", out), out
    assert re.search(r"full / empty server CPU: [\d.]+x", out), out
    assert re.search(r"full board \(300 runs\), 2 viewers: server CPU [\d.]+% of a core; "
                     r"board tick p50 \d+ ms.*; 0 errors", out), out
