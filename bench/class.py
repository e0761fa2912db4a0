"""A class on one server: a teacher's board and N learners at once, on SQLite and on PostgreSQL.

Every learner is a browser tab of its own (harness/st_client.py: Streamlit's websocket protocol,
as a browser speaks it, with each run_every fragment ticked at its interval as the browser's
timer does). The class runs as a 50-minute lesson would, compressed:

1. The teacher starts a class (the store the server uses) and opens its board on /class.
2. N learners open the join link (`/?class=<code>`) and are in the class.
3. Every learner commits an answer to the home page's knowledge check within the same second.
   Measured: for each answer, the time from its commit until the teacher's board (its
   fragment, ticking every second) counts it.
4. The teacher sends the class to a moons trainer link, then to a lesson step, twice. Measured,
   per destination: for each learner and send, the time until the learner's page (its follow
   fragment) has switched there and finished its run. Each tab's timers keep their own phase,
   as a browser's do: started when its page's run reached it, started again by a page switch
   (`--aligned-timers`: every tab ticks together, the worst case the bench measured before).
5. Everyone then waits on that step for a while, following: the server's CPU time over that
   window, per learner and second, is what following the teacher costs.
6. Every learner trains a one-epoch moons run (Step), which the server posts to the challenge
   board; the board must list one run per learner.

Prints each figure with its percentiles, errors, and the server's memory before, at peak and
after the learners left. A fresh server (and, for PostgreSQL, a throwaway database server from
harness/postgres.py) is started for each database and class size.

Run: .venv/bin/python -m bench.class [--learners 30 60] [--databases sqlite postgresql]
     [--follow-seconds 20] [--after 30] [--no-runs] [--aligned-timers] [--profile FOLDER]
     [--board-viewers 30] [--board-window 30] [--no-faults] [--fault-followers 20]
     [--fault-probes 5] [--sweep-learners 30]
     [--save]   (docs/figures/class.json)

After the lessons, on servers of their own: the Class page's server cost with an empty and a
full challenge board (bench/class_board_cost.py), and the p95 of an unrelated page while
PostgreSQL is paused and while the SQLite file is locked (bench/class_faults.py); and the class as
one experiment: a 3 x 3 sweep of 30 learners (`--sweep-learners N`; `--sweep-learners` alone
leaves it out), each run's way to the teacher's heatmap, the server's CPU and memory
(bench/class_sweep.py).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl


from bench.class_board_cost import board_cost_rows
from bench.class_faults import fault_rows
from harness.postgres import database_url
from bench.class_sweep import sweep_rows
from harness.app import Server, cpu_seconds
from harness.figures import Run
from harness.class_store import observer_store
from harness.st_client import (
    MemorySampler,
    RunResult,
    Session,
    follow_frames,
    mib,
    percentile,
    rss_bytes,
    string_state,
)
from workbench.classroom.store import URL_SETTING, ClassStore
from workbench.common.device_checks import DEVICE_MISMATCH as CHECK
from workbench.lessons.catalog import LESSONS
from workbench.tools import MOONS_TRAINER

ALIGNED = False           # --aligned-timers: every tab's timers tick together (the worst case)
ANSWERED = re.compile(r"\*\*(\d+)\*\* answered")
TRAINER = MOONS_TRAINER.url_path
ONE_EPOCH_RUN = "n=200&epochs=1&hidden=8"
# Where the teacher sends the class, as the Class page's send does: (destination, link, title).
# A moons trainer link with settings of its own, then two steps of the first lesson, where the
# class then sits following (what following costs is measured on the lesson step).
SENDS = [("moons trainer link", f"/{TRAINER}?n=300&hidden=16,16&lr=0.05", "moons trainer")]
SENDS += [("lesson step", f"/lessons?lesson={LESSONS[0].key}&step={number}",
           LESSONS[0].steps[number - 1].title) for number in (1, 2)]
DESTINATIONS = list(dict.fromkeys(destination for destination, _, _ in SENDS))


@dataclass
class Learner:
    index: int
    session: Session
    opened_at: float = 0.0           # when its page's first run reached it (its timers' phase)
    answered_at: float = 0.0
    arrivals: dict[str, list[float]] = field(default_factory=dict)   # destination -> seconds
    errors: list[str] = field(default_factory=list)
    posted: bool = False
    answer_runs: list[str] = field(default_factory=list)   # how the choice and the commit ran
    addresses: list[tuple[float, str]] = field(default_factory=list)   # (when, query) the tab showed

    def saw(self, result: RunResult) -> None:
        now = time.monotonic()
        self.addresses += [(now, query) for query in result.query_strings]

    def check(self, result: RunResult, what: str) -> RunResult:
        if result.error or result.exceptions or result.guard_panel:
            self.errors.append(f"{what}: {result.error or result.exceptions or result.guard_text[:200]}")
        return result


async def tick_fragments(session: Session, until: float, stop: asyncio.Event,
                         on_result=None, armed_at: float | None = None) -> None:
    """Run the page's run_every fragments at their intervals, as the browser's timers do, until
    `until` or `stop`; `on_result(result)` sees each run. A browser starts a fragment's timer
    when the run that asks for it reaches the tab (`armed_at`: when the tab's page opened) and
    starts it again on every full run (a page switch), so each tab keeps its own phase."""
    due: dict[str, float] = {}
    while time.monotonic() < until and not stop.is_set() and not session.closed:
        now = time.monotonic()
        for fragment, interval in list(session.fragments.items()):
            if fragment not in due:
                since = now if armed_at is None or ALIGNED else armed_at
                due[fragment] = since + interval * (1 + int((now - since) // interval))
            if now >= due[fragment]:
                due[fragment] = now + interval
                result = await session.tick(fragment)
                if not ALIGNED:
                    # the run re-armed these timers as it reached the tab
                    due.update((f, time.monotonic() + every) for f, every
                               in result.auto_reruns.items())
                if on_result is not None:
                    on_result(result)
        await asyncio.sleep(0.05)


async def answer(learner: Learner) -> None:
    session = learner.session
    option = CHECK.options[learner.index % len(CHECK.options)]
    choice = f"kc_{CHECK.key}_choice"
    chosen = learner.check(await session.set_value(choice, string_state(option)), "choose")
    learner.answered_at = time.monotonic()
    committed = learner.check(await session.click(f"kc_{CHECK.key}_commit"), "commit")
    learner.answer_runs += [chosen.status, committed.status]


def arrival(learner: Learner, link: str, since: float) -> float | None:
    """When the tab's address first held every parameter of the sent link after `since`: the
    page the follow fragment switched to (the lessons page then writes its link again without
    its defaults, so the address is read as it was at the switch)."""
    wanted = dict(parse_qsl(link.split("?", 1)[1]))
    for when, query in learner.addresses:
        shown = dict(parse_qsl(query))
        if when >= since and all(shown.get(name) == value for name, value in wanted.items()):
            return when
    return None


async def post_a_run(learner: Learner, code: str) -> None:
    session = learner.session
    result = learner.check(await session.navigate(TRAINER, f"{ONE_EPOCH_RUN}&class={code}"), "trainer")
    if result.error:
        return
    learner.check(await session.click("mt_step"), "step")
    # The epoch trains in the background; its last frame says the run ended, and the page runs
    # again (the live view's trigger), which posts the finished run. A busy server may end the
    # frames before the run has finished (a lapsed lease): the view asks again, as here.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        await follow_frames(session, deadline, lambda status: False)
        result = learner.check(await session.rerun(), "after the run")
        if result.has_text("Posted to class"):
            learner.posted = True
            return
        said = next((t for t in result.texts if "posted to class" in t.lower()
                     or "Already on class" in t), None)
        if said is not None:
            learner.errors.append(f"post: {said[:160]}")
            return
        await asyncio.sleep(0.5)          # not finished yet: look again, as the view would
    learner.errors.append("post: the run did not finish within 120 s")


def start_profiler(pid: int, folder: str | None, name: str) -> subprocess.Popen | None:
    """py-spy sampling the server's threads while the class follows the sends (`--profile`):
    a raw (collapsed) stack file per class, to read where the server's time went."""
    if not folder:
        return None
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        raise SystemExit("--profile needs py-spy (.venv/bin/pip install py-spy); it is not a "
                         "dependency of the app")
    Path(folder).mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([spy, "record", "--pid", str(pid), "--rate", "100", "--format", "raw",
                             "--output", f"{folder}/follow_{name}.txt", "--nonblocking"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_profiler(profiler: subprocess.Popen | None) -> None:
    if profiler is not None:
        profiler.send_signal(signal.SIGINT)           # py-spy writes its file on SIGINT
        profiler.wait(timeout=60)


async def lesson(url: str, pid: int, database: str, store: ClassStore, size: int,
                 args: argparse.Namespace) -> tuple[str, str]:
    before = rss_bytes(pid)
    sampler = MemorySampler(pid).start()
    started = store.start_class()
    teacher = Session(url, "class", f"class={started.code}&teacher={started.teacher_key}",
                      run_timeout=args.run_timeout)
    errors: list[str] = []
    board_counts: list[tuple[float, int]] = []      # (time, answers the board showed)

    def board_saw(result: RunResult) -> None:
        for text in result.texts:
            match = ANSWERED.search(text)
            if match:
                board_counts.append((time.monotonic(), int(match[1])))

    result = await teacher.open()
    if result.error or result.guard_panel:
        errors.append(f"teacher: {result.error or result.guard_text[:200]}")
    learners = [Learner(i, Session(url, "", f"class={started.code}", run_timeout=args.run_timeout))
                for i in range(size)]
    async def join(learner: Learner) -> RunResult:
        result = await learner.session.open()
        learner.opened_at = time.monotonic()
        return result

    joined = await asyncio.gather(*(join(learner) for learner in learners))
    for learner, result in zip(learners, joined, strict=True):
        learner.check(result, "join")
        if not result.has_text(f"In class {started.code}"):
            learner.errors.append("join: the sidebar does not say the learner is in the class")

    stop = asyncio.Event()
    board = asyncio.create_task(tick_fragments(teacher, time.monotonic() + 600, stop, board_saw))
    # Everyone answers within the same second.
    answering = time.monotonic()
    await asyncio.gather(*(answer(learner) for learner in learners))
    answered_within = time.monotonic() - answering
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and max((n for _, n in board_counts), default=0) < size:
        await asyncio.sleep(0.1)
    # An answer is counted once the board shows as many answers as had been committed by then.
    order = sorted(learners, key=lambda x: x.answered_at)
    counted = []
    for rank, learner in enumerate(order, start=1):
        seen = next((t for t, n in board_counts if n >= rank and t >= learner.answered_at), None)
        counted.append(seen - learner.answered_at if seen is not None else float("inf"))

    # The teacher sends the class three times; each learner's follow fragment moves its page.
    followers = [asyncio.create_task(tick_fragments(x.session, time.monotonic() + 600, stop, x.saw,
                                                    x.opened_at)) for x in learners]
    profiler = start_profiler(pid, args.profile, f"{database}_{size}")
    for destination, link, title in SENDS:
        sent = time.monotonic()
        store.send(started.code, started.teacher_key, link, title)
        waiting = {x.index for x in learners}
        while waiting and time.monotonic() - sent < 30:
            for learner in learners:
                when = arrival(learner, link, sent) if learner.index in waiting else None
                if when is not None:
                    learner.arrivals.setdefault(destination, []).append(when - sent)
                    waiting.discard(learner.index)
            await asyncio.sleep(0.05)
        for learner in learners:
            if learner.index in waiting:
                learner.arrivals.setdefault(destination, []).append(float("inf"))
        await asyncio.sleep(args.settle)      # the pages settle before the next send
    stop_profiler(profiler)
    # Following costs the server a run of each follow fragment every FOLLOW_SECONDS: measured
    # while the class sits on the lesson step.
    cpu_start, window_start = cpu_seconds(pid), time.monotonic()
    await asyncio.sleep(args.follow_seconds)
    follow_cpu = (cpu_seconds(pid) - cpu_start) / (time.monotonic() - window_start) / size
    stop.set()
    await asyncio.gather(board, *followers)

    if not args.no_runs:
        await asyncio.gather(*(post_a_run(learner, started.code) for learner in learners))
    board_runs = len(store.challenge_board(started.code, teacher_key=started.teacher_key).runs)

    for session in (teacher, *(x.session for x in learners)):
        await session.close()
    closed = time.monotonic()
    while time.monotonic() - closed < args.after:
        await asyncio.sleep(1)
    await sampler.stop()
    after = rss_bytes(pid)
    store.end_class(started.code, started.teacher_key)

    by_destination = {d: [a for x in learners for a in x.arrivals.get(d, [])] for d in DESTINATIONS}
    arrivals = [a for values in by_destination.values() for a in values]
    errors += [f"#{x.index} {e}" for x in learners for e in x.errors]
    lost = sum(1 for a in counted if a == float("inf")) + sum(1 for a in arrivals if a == float("inf"))
    print(f"\n== class of {size} learners, {database}")
    print(f"answers committed within {answered_within:.2f} s; board counted them: "
          f"p50 {percentile(counted, 50):.2f} s, p95 {percentile(counted, 95):.2f} s, "
          f"max {max(counted):.2f} s")
    for destination, values in by_destination.items():
        sends = sum(1 for d, _, _ in SENDS if d == destination)
        print(f"followers arrived at a {destination}: p50 {percentile(values, 50):.2f} s, "
              f"p95 {percentile(values, 95):.2f} s, max {max(values):.2f} s ({sends} sends)")
    print(f"server CPU while the class follows: {1000 * follow_cpu:.1f} ms per learner per second")
    runs = [status for x in learners for status in x.answer_runs]
    print(f"answering ran the check's fragment alone: {runs.count('fragment_success')} of "
          f"{len(runs)} clicks")
    if not args.no_runs:
        print(f"runs posted: {sum(x.posted for x in learners)} learners told, {board_runs} on "
              "the board")
    print(f"server memory: before {mib(before)}, peak {mib(sampler.peak)}, {args.after:.0f} s "
          f"after the class left {mib(after)}")
    print(f"errors: {len(errors)}, answers or arrivals never seen: {lost}")
    for error in errors[:20]:
        print(f"  {error}")
    return (
        f"a class of {size} learners on one server, {database}",
        f"board counts every answer: p50 {percentile(counted, 50):.2f} s, p95 "
        f"{percentile(counted, 95):.2f} s; "
        + "; ".join(f"followers arrive at a {d}: p50 {percentile(v, 50):.2f} s, p95 "
                    f"{percentile(v, 95):.2f} s" for d, v in by_destination.items())
        + f"; following costs {1000 * follow_cpu:.1f} ms of server "
        f"CPU per learner per second; "
        + ("" if args.no_runs else f"{board_runs} of {size} runs on the board; ")
        + "memory "
        f"{mib(before)} -> {mib(sampler.peak)} (peak) -> {mib(after)}; {len(errors)} errors, "
        f"{lost} never seen",
    )


def main() -> None:
    run = Run("class", "A class on one server: the teacher's board, following, posted runs")
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", type=int, nargs="+", default=[30, 60])
    parser.add_argument("--databases", nargs="+", default=["sqlite", "postgresql"],
                        choices=["sqlite", "postgresql"])
    parser.add_argument("--follow-seconds", type=float, default=20,
                        help="how long the class sits following, for the CPU it costs")
    parser.add_argument("--after", type=float, default=30, help="seconds after, for memory")
    parser.add_argument("--run-timeout", type=float, default=60)
    parser.add_argument("--settle", type=float, default=3,
                        help="seconds between one send's last arrival and the next send")
    parser.add_argument("--aligned-timers", action="store_true",
                        help="tick every tab's fragments together, from one moment, and never "
                        "re-arm them on a page switch (the worst case; before 2026-12-06 the "
                        "bench always did this)")
    parser.add_argument("--profile", metavar="FOLDER",
                        help="sample the server with py-spy while the class follows the sends")
    parser.add_argument("--no-runs", action="store_true",
                        help="leave out the posted moons runs (following only)")
    parser.add_argument("--board-viewers", type=int, default=30,
                        help="learners on the Class page for the board's cost (0: leave it out)")
    parser.add_argument("--board-window", type=float, default=30,
                        help="seconds of server CPU measured per board (empty, full)")
    parser.add_argument("--no-faults", action="store_true",
                        help="leave out the stalled-database figures (bench/class_faults.py)")
    parser.add_argument("--fault-followers", type=int, default=20,
                        help="learners following while the database stalls")
    parser.add_argument("--fault-probes", type=int, default=5,
                        help="class members committing an answer during each fault")
    parser.add_argument("--sweep-learners", type=int, nargs="*", default=[30],
                        help="learners in a 3 x 3 class sweep, on a server of its own per "
                        "database (bench/class_sweep.py; none: leave the sweep out)")
    args = parser.parse_args()
    global ALIGNED
    ALIGNED = args.aligned_timers
    rows = []
    for database in args.databases:
        for size in args.learners:
            with database_url(database) as url:
                os.environ[URL_SETTING] = url         # the server's class store, and this one's
                store = observer_store(url)
                with Server(log_path=f"/tmp/class_server_{database}_{size}.log") as server:
                    rows.append(asyncio.run(lesson(server.url, server.pid, database, store, size,
                                                   args)))
    if args.board_viewers:
        # The Class page's cost with an empty and a full (300 runs) challenge board, on a
        # server of its own (bench/class_board_cost.py).
        with database_url("sqlite") as url:
            os.environ[URL_SETTING] = url
            store = observer_store(url)
            with Server(log_path="/tmp/class_board_cost_server.log") as server:
                rows.extend(board_cost_rows(server.url, server.pid, store, args.board_viewers,
                                            args.board_window))
            store.dispose()
    if not args.no_faults:
        # An unrelated page's p95, and a class member's, while the database stalls
        # (bench/class_faults.py: PostgreSQL paused, the SQLite file locked).
        rows.extend(fault_rows(args.databases, args.fault_followers, args.fault_probes))
    if args.sweep_learners:
        rows.extend(sweep_rows(args.databases, args.sweep_learners))
    run.save(rows)


if __name__ == "__main__":
    main()
