"""The class sweep's scenario, shared by bench/class_sweep.py (its figures) and
tests/e2e/test_class_sweep.py (a 3 x 3 sweep of nine learners): a teacher starts a sweep of GRID
over BASE, each websocket learner follows the send to their cell, presses Play and waits for the
run to be kept; the teacher's board is ticked as the browser would, and each kept run's way to
the heatmap is timed."""
from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field

from sqlalchemy import select

from harness.app import cpu_seconds
from harness.figures import load_average
from harness.st_client import (MemorySampler, RunResult, Session, follow_frames, rss_bytes,
                               run_timers)
from workbench.classroom import sweep_store
from workbench.classroom.schema import sweep_runs
from workbench.classroom.store import ClassStore
from workbench.classroom.sweep import Grid

BASE = "/moons_trainer?n=300&epochs=15&batch=32&speed=max"
GRID = (("lr", "0.003 0.03 0.3"), ("hidden", "4 8 16"))
KEPT = re.compile(r"(\d+) run\\?\(s\\?\) kept")
SWEEP_TITLE = "the class sweep: your cell"       # app_pages/classroom/sweep_panel.py's


@dataclass
class SweepLearner:
    index: int
    session: Session
    arrived_at: float | None = None              # its page opened its cell (time.monotonic())
    kept: bool = False
    note: str = ""
    errors: list[str] = field(default_factory=list)

    def check(self, result: RunResult, what: str) -> RunResult:
        if result.error or result.exceptions or result.guard_panel:
            self.errors.append(f"{what}: {result.error or result.exceptions or result.guard_text[:200]}")
        return result


@dataclass
class SweepOutcome:
    learners: int
    database: str
    latencies: list[float]               # per kept run: kept -> on the teacher's board, seconds
    kept_runs: int
    cpu_share: float                     # of one core, over the sweep
    memory: tuple[int, int, int]         # before, peak, after (bytes)
    errors: list[str]
    heatmap: list[list[float | None]]    # the teacher's last heatmap, test accuracy %
    cell_links: list[str]
    cell_accuracies: list[float | None]  # the store's first kept run per cell (fraction)
    load: tuple[list[float], list[float]] = ([], [])
    texts: list[str] = field(default_factory=list)


async def _train_cell(learner: SweepLearner, deadline: float) -> None:
    """Follow the teacher to the learner's cell, press Play, and wait for the run's post."""
    session = learner.session
    while learner.arrived_at is None and time.monotonic() < deadline:
        for fragment, interval in list(session.fragments.items()):
            if interval <= 1.0:                  # the follow fragment
                result = learner.check(await session.tick(fragment), "follow")
                if any(query for query in result.query_strings):     # switched to its cell
                    learner.arrived_at = time.monotonic()
                    break
        await asyncio.sleep(0.5)
    if learner.arrived_at is None:
        learner.errors.append("never arrived at a cell")
        return
    learner.check(await session.click("mt_play"), "play")
    while time.monotonic() < deadline:
        await follow_frames(session, deadline, lambda status: False)
        result = learner.check(await session.rerun(), "after the run")
        said = next((t for t in result.texts if "sweep cell" in t), None)
        if said is not None:
            learner.note = said
            learner.kept = "Kept for your sweep cell" in said.replace("\\", "")
            if not learner.kept:
                learner.errors.append(f"not kept: {said[:200]}")
            return
        await asyncio.sleep(0.5)
    learner.errors.append("the run was not kept in time")


def _heatmap_of(specs: list[str]) -> list[list[float | None]] | None:
    for spec in specs:
        figure = json.loads(spec)
        for trace in figure.get("data", []):
            if trace.get("type") == "heatmap":
                return trace["z"]
    return None


async def sweep_class(url: str, pid: int, store: ClassStore, database: str, size: int,
                      grid: Grid, timeout: float = 300) -> SweepOutcome:
    load_start = load_average()
    before = rss_bytes(pid)
    sampler = MemorySampler(pid).start()
    started = store.start_class()
    teacher = Session(url, "class", f"class={started.code}&teacher={started.teacher_key}",
                      run_timeout=120)
    errors: list[str] = []
    seen_kept: list[tuple[float, int]] = []      # (time.time(), runs kept the board showed)
    last_specs: list[list[str]] = [[]]
    texts: list[str] = []

    def board_saw(result: RunResult) -> None:
        if result.error:
            errors.append(f"teacher: {result.error}")
        for text in result.texts:
            match = KEPT.search(text)
            if match:
                seen_kept.append((time.time(), int(match[1])))
                texts.append(text)
        if _heatmap_of(result.plotly_specs) is not None:
            last_specs[0] = result.plotly_specs

    board_saw(await teacher.open())
    learners = [SweepLearner(i, Session(url, "", f"class={started.code}", run_timeout=120))
                for i in range(size)]
    opened = await asyncio.gather(*(x.session.open() for x in learners))
    for learner, result in zip(learners, opened, strict=True):
        learner.check(result, "join")

    stop = asyncio.Event()
    board = asyncio.create_task(run_timers(teacher, time.monotonic() + timeout, stop,
                                           lambda _fragment, result: board_saw(result)))
    cpu_start, window_start = cpu_seconds(pid), time.monotonic()
    number = sweep_store.start_sweep(store, started.code, started.teacher_key, grid)
    store.send(started.code, started.teacher_key, sweep_store.sweep_send_link(number), SWEEP_TITLE)
    deadline = time.monotonic() + timeout
    await asyncio.gather(*(_train_cell(x, deadline) for x in learners))
    with store.engine.connect() as connection:
        kept_at = sorted(connection.execute(select(sweep_runs.c.posted_at)).scalars())
    wait_until = time.monotonic() + 20
    while time.monotonic() < wait_until and max((n for _, n in seen_kept), default=0) < len(kept_at):
        await asyncio.sleep(0.1)
    cpu_share = (cpu_seconds(pid) - cpu_start) / (time.monotonic() - window_start)
    stop.set()
    await board
    final = sweep_store.sweep_board(store, started.code, teacher_key=started.teacher_key)
    latencies = []
    for rank, at in enumerate(kept_at, start=1):
        shown = next((t for t, n in seen_kept if n >= rank and t >= at), None)
        latencies.append(shown - at if shown is not None else float("inf"))
    for session in (teacher, *(x.session for x in learners)):
        await session.close()
    await asyncio.sleep(3)
    await sampler.stop()
    after = rss_bytes(pid)
    store.end_class(started.code, started.teacher_key)
    errors += [f"#{x.index} {e}" for x in learners for e in x.errors]
    return SweepOutcome(
        size, database, latencies, len(kept_at), cpu_share, (before, sampler.peak, after), errors,
        _heatmap_of(last_specs[0]) or [], [r.cell.link for r in final.results] if final else [],
        [r.accuracy for r in final.results] if final else [], (load_start, load_average()), texts)
