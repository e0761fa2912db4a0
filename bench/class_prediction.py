"""Predict, then run, with a class on one server: how soon learners see a posed question and a
reveal, and what the prediction fragment costs the server.

N learners (websocket sessions speaking Streamlit's protocol, harness/st_client.py, their
run_every fragments ticked as a browser's timers tick) join a class on the home page and sit
there. Measured, on a fresh server and a throwaway SQLite file or PostgreSQL server:

1. server CPU per learner and second while no prediction is open (following and the prediction
   fragment, which then draws nothing);
2. the time from the teacher's pose to each learner's page showing the question;
3. every learner votes (the option is the radio's, the click the Vote button's);
4. server CPU per learner and second while the prediction is open and voted;
5. the time from the reveal to each learner's page showing the votes locked.

Run: .venv/bin/python -m bench.class_prediction [--learners 30] [--databases sqlite]
     [--window 20]
"""
from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import time

from bench.class_faults import database_url
from harness.app import Server, cpu_seconds
from harness.st_client import RunResult, Session, percentile, string_state
from harness.class_store import observer_store
from workbench.classroom import prediction_store
from workbench.classroom.predictions import validate_question
from workbench.classroom.store import URL_SETTING, ClassStore

# bench/class.py's timers, as a browser ticks them ("class" is a keyword: imported by name).
tick_fragments = importlib.import_module("bench.class").tick_fragments
QUESTION = validate_question("Will the loss go down with lr = 1?", ["Yes", "No"], 1)


async def _tick_all(sessions: list[Session], seconds: float) -> None:
    until = time.monotonic() + seconds
    await asyncio.gather(*(tick_fragments(s, until, asyncio.Event()) for s in sessions))


async def _cpu_per_learner(pid: int, sessions: list[Session], seconds: float) -> float:
    before, started = cpu_seconds(pid), time.monotonic()
    await _tick_all(sessions, seconds)
    return (cpu_seconds(pid) - before) / (time.monotonic() - started) / len(sessions)


async def _until_seen(sessions: list[Session], text: str, since: float, limit: float) -> list[float]:
    """Seconds from `since` until each session's ticks first showed `text` (inf: never)."""
    seen: dict[int, float] = {}
    stop = asyncio.Event()

    def saw(session: Session, result: RunResult) -> None:
        if id(session) not in seen and result.has_text(text):
            seen[id(session)] = time.monotonic() - since
            if len(seen) == len(sessions):
                stop.set()

    until = time.monotonic() + limit
    await asyncio.gather(*(tick_fragments(s, until, stop, on_result=lambda r, s=s: saw(s, r))
                           for s in sessions))
    return [seen.get(id(s), float("inf")) for s in sessions]


async def _class(url: str, pid: int, store: ClassStore, size: int, window: float) -> None:
    started = store.start_class()
    sessions: list[Session] = []
    try:
        for _ in range(size):
            for _attempt in range(3):      # a join the database's deadline missed: a new tab
                session = Session(url, query=f"class={started.code}")
                result = await session.open()
                if result.has_text(f"In class {started.code}"):
                    break
                await session.close()
            else:
                raise SystemExit(f"a learner could not join: {result.error or result.texts[:3]}")
            sessions.append(session)
        idle = await _cpu_per_learner(pid, sessions, window)

        posed_at = time.monotonic()
        posed = prediction_store.pose(store, started.code, started.teacher_key, QUESTION)
        shown = await _until_seen(sessions, "Your teacher asks you to predict", posed_at, 30)
        for number, session in enumerate(sessions):
            await session.set_value(f"class_prediction_choice_{posed}", string_state(
                QUESTION.options[number % 2]))
            await session.click(f"class_prediction_vote_{posed}")
        voted = prediction_store.current(store, started.code, teacher_key=started.teacher_key).voted
        open_cost = await _cpu_per_learner(pid, sessions, window)

        revealed_at = time.monotonic()
        prediction_store.reveal(store, started.code, started.teacher_key, posed)
        locked = await _until_seen(sessions, "Votes are locked", revealed_at, 30)
    finally:
        for session in sessions:
            await session.close()
    print(f"server CPU per learner and second, no prediction open: {1000 * idle:.1f} ms; "
          f"open and voted: {1000 * open_cost:.1f} ms")
    print(f"question on learners' pages after the pose: p50 {percentile(shown, 50):.2f} s, "
          f"p95 {percentile(shown, 95):.2f} s, max {max(shown):.2f} s")
    print(f"votes recorded: {voted} of {size}")
    print(f"'Votes are locked' on learners' pages after the reveal: p50 "
          f"{percentile(locked, 50):.2f} s, p95 {percentile(locked, 95):.2f} s, "
          f"max {max(locked):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", type=int, nargs="+", default=[30])
    parser.add_argument("--databases", nargs="+", default=["sqlite"],
                        choices=["sqlite", "postgresql"])
    parser.add_argument("--window", type=float, default=20, help="seconds per CPU window")
    args = parser.parse_args()
    for database in args.databases:
        for size in args.learners:
            with database_url(database) as url:
                os.environ[URL_SETTING] = url          # the server's class store, and this one's
                store = observer_store(url)
                with Server(log_path=f"/tmp/class_prediction_{database}_{size}.log") as server:
                    print(f"\n== {size} learners, {database}")
                    asyncio.run(_class(server.url, server.pid, store, size, args.window))
                store.dispose()


if __name__ == "__main__":
    main()
