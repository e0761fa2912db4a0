"""A class whose database stalls: how fast a page that does not wait for the class stays, and how
soon a class member's page says the class is out of reach (issue 42: a paused PostgreSQL held a
learner in no class for 59 s on the tensor inspector; a locked SQLite file, 29.3 s).

One server (harness/app.py), its class database a throwaway PostgreSQL server
(harness/postgres.py) or a SQLite file in a temporary folder. A teacher's board, FOLLOWERS
learners whose follow fragment asks the database every 1.5 s (harness/st_client.py ticks it as
the browser's timer does), and a learner in no class on the tensor inspector. For each phase:

- healthy: the database answers;
- paused: PostgreSQL SIGSTOPped (every process of the server: a hung machine), or
- locked: the SQLite file locked by another process (`BEGIN EXCLUSIVE` and a write, held);

PROBES new class members (joined while the database was healthy) each choose and commit an
answer to the home page's knowledge check, while the learner in no class runs their page
STRANGER_RUNS times. Printed: the p50/p95/max of the unrelated page's runs; the member's page
runs (choose, then commit) and whether the commit's page said the answer waits for the class
database; the teacher's board run and what it said; after the fault, how long until every
answer given during it is on the board (they are sent on the members' next page runs).

Run: .venv/bin/python -m bench.class_faults [--databases sqlite postgresql] [--followers 20]
     [--probes 5] [--stranger-runs 20] [--save]   (docs/figures/class_faults.json)
"""
from __future__ import annotations

import argparse
import asyncio
import re
import contextlib
import math
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

from harness.app import Server
from harness.figures import Run
from harness.figures import parser as figures_parser
from harness.postgres import database_url, pause, resume
from harness.st_client import RunResult, Session, percentile, run_timers, string_state
from workbench.classroom.store import URL_SETTING, ClassStore
from workbench.common.device_checks import DEVICE_MISMATCH as CHECK
from workbench.tools import TENSOR_INSPECTOR

WAITS = "waits for the class database"            # components/knowledge_check.py
SAYS_WHY = ("out of reach", "locked by another program", "cannot be reached", "read-only")

# Another program holding the SQLite file: a write transaction kept open until told to end.
LOCKER = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
connection.execute("BEGIN EXCLUSIVE")
connection.execute("UPDATE classes SET send_title = send_title")
print("locked", flush=True)
sys.stdin.readline()
connection.execute("ROLLBACK")
"""


@contextlib.contextmanager
def fault(database: str, url: str) -> Iterator[str]:
    """The database stalled for the block: PostgreSQL paused, or the SQLite file locked."""
    if database == "postgresql":
        stopped = pause(url)
        try:
            yield "PostgreSQL paused (SIGSTOP)"
        finally:
            resume(stopped)
        return
    path = url.split(":///", 1)[1]
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, path], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
        yield "SQLite file locked by another process (BEGIN EXCLUSIVE)"
    finally:
        assert locker.stdin is not None
        locker.stdin.write("\n")
        locker.stdin.flush()
        locker.wait(timeout=30)


@dataclass
class Phase:
    name: str
    stranger: list[float]
    member_runs: list[float]
    member_told: int
    board_s: float
    board_said: str
    recovered_s: float | None = None


def said(result: RunResult) -> str:
    """The board's sentence about the fault, as a reader sees it: the element holds Markdown,
    whose backslash escapes (`\\;`, `\\.`) would otherwise reach the figures."""
    text = next((t for t in result.texts if any(why in t for why in SAYS_WHY)), "")
    return re.sub(r"\\(.)", r"\1", text)


async def member_answers(member: Session, index: int) -> tuple[list[float], bool]:
    option = CHECK.options[index % len(CHECK.options)]
    chosen = await member.set_value(f"kc_{CHECK.key}_choice", string_state(option))
    committed = await member.click(f"kc_{CHECK.key}_commit")
    return [chosen.wall_s, committed.wall_s], committed.has_text(WAITS)


async def stranger_runs(stranger: Session, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        result = await stranger.rerun()
        if result.error or result.guard_panel:
            raise RuntimeError(f"the unrelated page failed: {result.error or result.guard_text}")
        times.append(result.wall_s)
    return times


async def answers_on_board(store: ClassStore, code: str, key: str) -> int:
    with contextlib.suppress(Exception):
        return sum(t.answered for t in store.tallies(code, key) if t.check_key == CHECK.key)
    return -1


async def phase(name: str, url: str, database: str, store: ClassStore, code: str, key: str,
                teacher: Session, stranger: Session, args: argparse.Namespace,
                answered_before: int) -> Phase:
    members = [Session(url, "", f"class={code}") for _ in range(args.probes)]
    for member in members:
        opened = await member.open()
        if not opened.has_text(f"In class {code}"):
            raise RuntimeError(f"a member did not join: {opened.error or opened.texts[:5]}")
    stalled = fault(database, store.url) if name != "healthy" else contextlib.nullcontext(name)
    with stalled as what:
        answering = asyncio.gather(*(member_answers(m, i) for i, m in enumerate(members)))
        strangers = asyncio.create_task(stranger_runs(stranger, args.stranger_runs))
        answered = await answering
        board = await teacher.rerun()
        times = await strangers
        name = what
    recovered_s = None
    if name != "healthy":
        # The database is back: the answers given meanwhile reach the board on the members' next
        # page runs (each run sends what waits; the breaker lets a probe through after 3 s).
        back, wanted = time.monotonic(), answered_before + args.probes
        while time.monotonic() - back < 60:
            for member in members:
                await member.rerun()
            if await answers_on_board(store, code, key) >= wanted:
                recovered_s = time.monotonic() - back
                break
            await asyncio.sleep(0.2)
    for member in members:
        await member.close()
    return Phase(name, times, [t for runs, _ in answered for t in runs],
                 sum(told for _, told in answered), board.wall_s, said(board), recovered_s)


async def measure(url: str, database: str, store: ClassStore, args: argparse.Namespace) -> list[Phase]:
    started = store.start_class()
    code, key = started.code, started.teacher_key
    teacher = Session(url, "class", f"class={code}&teacher={key}")
    await teacher.open()
    followers = [Session(url, "", f"class={code}") for _ in range(args.followers)]
    await asyncio.gather(*(f.open() for f in followers))
    stranger = Session(url, TENSOR_INSPECTOR.url_path)
    await stranger.open()
    stop = asyncio.Event()
    ticking = [asyncio.create_task(run_timers(f, math.inf, stop)) for f in followers]
    await asyncio.sleep(3)                    # the followers' fragments are running
    phases = []
    for name in ("healthy", "stalled"):
        before = await answers_on_board(store, code, key)
        phases.append(await phase(name, url, database, store, code, key, teacher, stranger, args,
                                  before))
    stop.set()
    await asyncio.gather(*ticking)
    for session in (teacher, stranger, *followers):
        await session.close()
    return phases


def describe(phase: Phase, probes: int) -> str:
    stranger = (f"unrelated page (tensor inspector, no class) p50 {percentile(phase.stranger, 50):.2f} s, "
                f"p95 {percentile(phase.stranger, 95):.2f} s, max {max(phase.stranger):.2f} s")
    member = (f"class member's page runs p50 {percentile(phase.member_runs, 50):.2f} s, "
              f"p95 {percentile(phase.member_runs, 95):.2f} s, max {max(phase.member_runs):.2f} s; "
              f"{phase.member_told} of {probes} commits said the answer waits")
    board = f"teacher's board run {phase.board_s:.2f} s" + (f" (said: “{phase.board_said}”)"
                                                            if phase.board_said else "")
    if phase.name == "healthy":
        recovered = ""
    elif phase.recovered_s is None:
        recovered = "; the answers given meanwhile NOT on the board within 60 s after"
    else:
        recovered = (f"; every answer given meanwhile on the board {phase.recovered_s:.1f} s "
                     "after the database came back")
    return f"{stranger}; {member}; {board}{recovered}"


def fault_rows(databases: list[str], followers: int = 20, probes: int = 5,
               stranger_runs: int = 20) -> list[tuple[str, str]]:
    """Run the measurement on each database, print it, and return its rows (what, figure): what
    bench/class.py calls to put these figures beside its own."""
    args = argparse.Namespace(followers=followers, probes=probes, stranger_runs=stranger_runs)
    rows = []
    for database in databases:
        with database_url(database) as url:
            os.environ[URL_SETTING] = url              # the server's class store, and this one's
            store = ClassStore(url)
            with Server(log_path=f"/tmp/class_faults_server_{database}.log") as server:
                phases = asyncio.run(measure(server.url, database, store, args))
            store.dispose()
        print(f"\n== {database}, {followers} followers, load average "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for phase in phases:
            print(f"{phase.name}: {describe(phase, probes)}")
            rows.append((f"a stalled class database, {database}: {phase.name}",
                         describe(phase, probes)))
    return rows


def main() -> None:
    run = Run("class_faults", "A stalled class database: an unrelated page and a class member's")
    parser = figures_parser(__doc__)
    parser.add_argument("--databases", nargs="+", default=["sqlite", "postgresql"],
                        choices=["sqlite", "postgresql"])
    parser.add_argument("--followers", type=int, default=20)
    parser.add_argument("--probes", type=int, default=5)
    parser.add_argument("--stranger-runs", type=int, default=20)
    args = parser.parse_args()
    run.save(fault_rows(args.databases, args.followers, args.probes, args.stranger_runs))


if __name__ == "__main__":
    main()
