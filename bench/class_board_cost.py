"""The Class page's server cost with an empty challenge board and with a full one (issue 42).

A server (harness/app.py) and N viewers on the Class page, each a browser tab of its own
(harness/st_client.py: Streamlit's websocket protocol, every run_every fragment ticked at its
interval as the browser's timer does). The viewers are learners of the class: they open the
join link on the Class page (`/class?class=<code>`), so each also ticks its follow fragment,
the same in both cases. For each board, a fresh class:

- **empty**: no posted run;
- **full**: 300 posted runs (the class's cap), posted through the store by 30 other members
  (10 each, the per-learner cap), before the viewers open the page.

Measured, after the viewers opened the page and SETTLE seconds of ticking:

- the server's CPU over WINDOW seconds (the process and its children), as a share of one core;
- the board's refresh: the round trip of each tick of the board's own fragment (the one that
  runs every 3 s), p50 and p95;
- a change reaching every viewer: the teacher sets the challenge (through the store), and the
  time until each viewer's page shows the new challenge sentence, p50 and p95.

The goal (issue 42, item 7): the full board's CPU within 1.5x of the empty board's. The machine
may be shared: the load average at the start and the end is printed and saved.

Run: .venv/bin/python -m bench.class_board_cost [--viewers 30] [--window 30] [--save]
     (docs/figures/class_board_cost.json; bench/class.py calls `board_cost_rows`)
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field

from harness.app import Server, cpu_seconds
from harness.figures import Run, load_average
from harness.st_client import RunResult, Session, percentile, run_timers
from harness.class_store import observer_store
from workbench.classroom.store import (MAX_RUNS_PER_CLASS, MAX_RUNS_PER_MEMBER, URL_SETTING,
                                       ClassStore, RunEntry)

# bench/class.py's reading of the server's CPU ("class" is a keyword: imported by name).
BOARD_SECONDS = 3.0              # app_pages/classroom/challenge_board.py's BOARD_SECONDS
OPTIMIZERS = ("SGD", "Adam", "AdamW", "RMSprop")
SETTLE = 6.0                     # seconds of ticking before the window: the opening runs end
NEW_LIMIT = 777                  # the challenge the teacher sets to see a change arrive


@dataclass
class BoardCost:
    board: str                   # "empty" or "full"
    runs: int
    viewers: int
    cpu_share: float             # of one core, over the window
    tick_s: list[float] = field(default_factory=list)       # the board fragment's round trips
    change_s: list[float] = field(default_factory=list)     # challenge set -> each viewer shows it
    errors: list[str] = field(default_factory=list)


def post_runs(store: ClassStore, code: str, count: int) -> None:
    """`count` runs on the class's board, from count / 10 members (the per-learner cap), with
    distinct settings so the table and the scatter have as many rows and points."""
    for member in range((count + MAX_RUNS_PER_MEMBER - 1) // MAX_RUNS_PER_MEMBER):
        joined = store.join(code, f"Poster {member}")
        for index in range(min(MAX_RUNS_PER_MEMBER, count - member * MAX_RUNS_PER_MEMBER)):
            lr = round(0.001 * (1 + member + 30 * index), 4)
            hidden = f"{4 + index},{2 + member % 8}"
            store.post_run(code, joined.token, RunEntry(
                f"/moons_trainer?hidden={hidden}&opt={OPTIMIZERS[index % 4]}&lr={lr:g}",
                OPTIMIZERS[index % 4], lr, 0.7 + 0.25 * ((member * 7 + index * 3) % 100) / 100,
                0.955, 40 + 17 * member + 5 * index))


async def class_page_cost(url: str, pid: int, store: ClassStore, board: str, viewers: int,
                          window: float, run_timeout: float = 60) -> BoardCost:
    started = store.start_class()
    runs = MAX_RUNS_PER_CLASS if board == "full" else 0
    post_runs(store, started.code, runs)
    cost = BoardCost(board, runs, viewers, 0.0)
    sessions = [Session(url, "class", f"class={started.code}", run_timeout=run_timeout)
                for _ in range(viewers)]
    opened = await asyncio.gather(*(s.open() for s in sessions))
    for index, result in enumerate(opened):
        if result.error or result.exceptions or result.guard_panel:
            said = result.error or result.exceptions or result.guard_text[:160]
            cost.errors.append(f"#{index} open: {said}")
    changed_at: list[float] = []
    shown_at: dict[int, float] = {}
    wanted = f"at most {NEW_LIMIT} parameters"

    def watcher(index: int, session: Session):
        def saw(fragment: str, result: RunResult) -> None:
            if measuring.is_set() and session.fragments.get(fragment) == BOARD_SECONDS \
                    and not result.error:
                cost.tick_s.append(result.wall_s)
            if changed_at and index not in shown_at and result.has_text(wanted):
                shown_at[index] = time.monotonic() - changed_at[0]
            if result.error:
                cost.errors.append(f"#{index} tick: {result.error}")
        return saw

    measuring = asyncio.Event()
    stop = asyncio.Event()
    tickers = [asyncio.create_task(run_timers(s, time.monotonic() + 600, stop, watcher(i, s)))
               for i, s in enumerate(sessions)]
    await asyncio.sleep(SETTLE)
    measuring.set()
    cpu_start, window_start = cpu_seconds(pid), time.monotonic()
    await asyncio.sleep(window)
    cost.cpu_share = (cpu_seconds(pid) - cpu_start) / (time.monotonic() - window_start)
    measuring.clear()
    # A change: every viewer's page must show it (within its next board tick and a page run).
    changed_at.append(time.monotonic())
    store.set_challenge(started.code, started.teacher_key, NEW_LIMIT)
    deadline = time.monotonic() + 30
    while len(shown_at) < viewers and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    cost.change_s = [shown_at.get(i, float("inf")) for i in range(viewers)]
    stop.set()
    await asyncio.gather(*tickers)
    for session in sessions:
        await session.close()
    store.end_class(started.code, started.teacher_key)
    return cost


def _seconds(values: list[float]) -> str:
    if not values:
        return "none seen"
    return (f"p50 {1000 * statistics.median(values):.0f} ms, p95 "
            f"{1000 * percentile(values, 95):.0f} ms")


def board_cost_rows(url: str, pid: int, store: ClassStore, viewers: int = 30,
                    window: float = 30) -> list[tuple[str, str]]:
    """Both boards on one running server, as rows for harness/figures.Run (bench/class.py)."""
    costs = [asyncio.run(class_page_cost(url, pid, store, board, viewers, window))
             for board in ("empty", "full")]
    empty, full = costs
    rows = []
    for cost in costs:
        line = (f"server CPU {100 * cost.cpu_share:.1f}% of a core; board tick {_seconds(cost.tick_s)}; "
                f"a change on every page {_seconds(cost.change_s)}; {len(cost.errors)} errors")
        print(f"{cost.board} board ({cost.runs} runs), {cost.viewers} viewers: {line}")
        for error in cost.errors[:10]:
            print(f"  {error}")
        rows.append((f"Class page, {cost.viewers} viewers, {cost.board} board ({cost.runs} runs)", line))
    ratio = full.cpu_share / empty.cpu_share if empty.cpu_share else float("inf")
    print(f"full / empty server CPU: {ratio:.2f}x (goal: at most 1.5x)")
    rows.append((f"Class page, {viewers} viewers: full board's CPU / empty board's",
                 f"{ratio:.2f}x (goal at most 1.5x)"))
    return rows


def main() -> None:
    run = Run("class_board_cost", "The Class page's server cost: an empty and a full challenge board")
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--viewers", type=int, default=30)
    parser.add_argument("--window", type=float, default=30, help="seconds of CPU measured")
    args = parser.parse_args()
    print(f"load average at the start: {load_average()}")
    with tempfile.TemporaryDirectory(prefix="workbench-board-cost-") as folder:
        url = f"sqlite:///{folder}/classroom.sqlite3"
        os.environ[URL_SETTING] = url                 # the server's class store, and this one's
        store = observer_store(url)
        with Server(log_path="/tmp/class_board_cost_server.log") as server:
            rows = board_cost_rows(server.url, server.pid, store, args.viewers, args.window)
        store.dispose()
    print(f"load average at the end: {load_average()}")
    run.save(rows)


if __name__ == "__main__":
    main()
