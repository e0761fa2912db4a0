"""A class of learners at once: concurrent websocket sessions with a realistic mix of work.

Each learner opens a lesson link as a fresh tab, changes a setting there, follows an in-app link
to the moons trainer, changes the learning rate, presses Play and follows the run's frames over
the frame route as the live view does (one ask at a time, ten a second; a frame that says the run
ended makes the page run again), then steps through the batch iterator.

The server is `streamlit run streamlit_app.py`, the app's one entry: each learner's live view
asks the frame route for frames over its WebSocket, ten a second, as a browser's does, and its
progress is the epoch counter those frames carry.

Prints script-time percentiles, the time until each learner's first page was complete, the
health endpoint's latency sampled every 0.25 s, errors, every learner's training progress and
the server's memory before, at peak and some time after the sessions closed. A fresh server is
started for each level of --sessions.

Run: .venv/bin/python -m bench.load [--sessions 10 30] [--train-seconds 30] [--after 60]
     [--ramp 0 --link "/moons_trainer?epochs=2"]   (the whole class opens one link at once)
     [--save]   (docs/figures/load.json; with --link, load_link.json)
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import time
import urllib.request
from dataclasses import dataclass, field

from app_pages.navigation import HOME, LESSONS_PAGE
from harness.app import Server
from harness.figures import Run
from harness.st_client import (
    MemorySampler,
    RunResult,
    Session,
    follow_frames,
    mib,
    number_state,
    percentile,
    rss_bytes,
    string_state,
)
from workbench.tools import TOOLS

# Lesson links of the guided lessons and README examples: (page, query).
LINKS = (
    ("tensor_inspector", "shape=2,3&ops=t().view(-1)"),
    ("tensor_inspector", "shape=64,128&dtype=bfloat16"),
    ("tensor_inspector", "shape=4,6&ops=t().view(-1)"),
    (
        "autograd_graph",
        "code=w%20%3D%20torch.tensor(3.0%2C%20requires_grad%3DTrue)%0AL%20%3D%20w%20**%202%0A&backward=3&retain=1",
    ),
    (
        "autograd_graph",
        "code=x%20%3D%20torch.tensor(2.0%2C%20requires_grad%3DTrue)%0Ay%20%3D%20x**2%20%2B%203*x&backward=1",
    ),
    ("moons_trainer", "epochs=2"),
    ("moons_trainer", "dataset=spiral&hidden=32,32,16&act=Tanh&epochs=200&hide=opt,lr"),
    ("batch_iterator", "n=40&minority=10&sampler=weighted&shuffle=0&epochs=3"),
    ("batch_iterator", "n=20&batch=6&drop_last=1"),
    ("lessons", "lesson=training&step=2"),
    ("lessons", "lesson=batching&step=1"),
)
EPOCH = re.compile(r"Epoch (\d+) / (\d+)\*{0,2} · ([\d,]+) optimizer steps")
BUSY = "The server is busy"


@dataclass
class Learner:
    index: int
    link: str
    first_page_s: float = 0.0
    runs: list[RunResult] = field(default_factory=list)
    progress: str = "not started"
    busy: int = 0
    plays: int = 0
    trained_epochs: tuple[int, int] = (0, 0)
    frames: int = 0     # frames the learner's live view got over the frame route
    lapses: int = 0     # frames that said the run ended before it finished (a lapsed lease)
    error: str | None = None

    @property
    def finished(self) -> bool:
        return 0 < self.trained_epochs[1] <= self.trained_epochs[0]

    def read_status(self, text: str) -> bool:
        """Read the progress a frame's status line shows; whether the run has finished."""
        self.frames += 1
        self._progress(text)
        return self.finished

    def _progress(self, text: str) -> None:
        match = EPOCH.search(text)
        if match:
            self.trained_epochs = (int(match[1]), int(match[2]))
            self.progress = f"epoch {match[1]} / {match[2]}, {match[3]:>6} steps"

    def record(self, result: RunResult, *, trainer: bool = False) -> RunResult:
        """Keep a run; on the moons trainer (`trainer`), read the training progress it shows."""
        self.runs.append(result)
        for text in result.texts:
            if trainer:
                self._progress(text)
            if BUSY in text:
                self.busy += 1
        return result


async def change_setting(session: Session, page: str, rng: random.Random) -> RunResult | None:
    """One typical change on the page the lesson link opened."""
    keys = {w.key for w in session.widgets.values()}
    if page == "tensor_inspector" and "ti_dtype" in keys:
        return await session.set_value(
            "ti_dtype", string_state(rng.choice(session.widget("ti_dtype").options))
        )
    if page == "autograd_graph" and "ag_backward" in keys:
        return await session.set_value("ag_backward", number_state(session, "ag_backward", rng.randint(1, 4)))
    if page == "moons_trainer" and "mt_batch" in keys:
        return await session.set_value(
            "mt_batch", number_state(session, "mt_batch", rng.choice((32, 64, 128)))
        )
    if page == "batch_iterator" and "bi_next" in keys:
        return await session.click("bi_next")
    if page == "lessons" and "lesson_next" in keys:
        return await session.click("lesson_next")
    return None


async def train(session: Session, learner: Learner, until: float) -> None:
    """Play, then follow the run's frames over the frame route as the live view does, until
    training ends; a frame that says the run ended makes the page run again (the view's
    trigger), which starts a run whose lease lapsed again or shows a finished run's results."""
    while time.monotonic() < until and not learner.finished:
        if not session.widget("mt_play").disabled:
            learner.plays += 1
            learner.record(await session.click("mt_play"), trainer=True)
        if session.poll_url is None:
            return  # nothing plays (a busy answer was recorded): the browser shows why
        ended = await follow_frames(session, until, learner.read_status)
        if learner.finished:
            return
        if ended:
            learner.lapses += 1
            learner.record(await session.rerun(), trainer=True)
        else:
            return  # the time is up


async def learner_run(
    url: str, learner: Learner, rng: random.Random, train_seconds: float, run_timeout: float,
    link: str | None = None,
) -> None:
    if link:                          # the whole class opens one link, e.g. from a slide
        page, _, query = link.lstrip("/").partition("?")
    else:
        page, query = LINKS[(learner.index * 5) % len(LINKS)]  # 5 and 11 are coprime: spread
    learner.link = f"/{page}?{query}"
    started = time.perf_counter()
    session = Session(url, page, query, run_timeout=run_timeout)
    try:
        await session.connect()
        first = learner.record(await session.open())
        learner.first_page_s = time.perf_counter() - started
        if not first.finished:
            learner.error = f"first page: {first.error or first.status}"
            return
        await asyncio.sleep(rng.uniform(0.5, 2.0))  # reading
        changed = await change_setting(session, page, rng)
        if changed is not None:
            learner.record(changed)
        epochs = rng.choice((2, 5, 20))
        learner.record(await session.navigate("moons_trainer", f"epochs={epochs}"), trainer=True)
        learner.record(
            await session.set_value("mt_lr", number_state(session, "mt_lr", rng.choice((0.003, 0.01)))),
            trainer=True,
        )
        await train(session, learner, time.monotonic() + train_seconds)
        learner.record(await session.navigate("batch_iterator", "n=20&batch=6&shuffle=0"))
        for _ in range(4):
            await asyncio.sleep(rng.uniform(0.3, 1.0))
            if "bi_next" in {w.key for w in session.widgets.values()}:
                learner.record(await session.click("bi_next"))
    except Exception as exc:  # noqa: BLE001 - one learner's failure is a finding, not a crash
        learner.error = f"{type(exc).__name__}: {exc}"
    finally:
        await session.close()


async def health_sampler(url: str, latencies: list[float], failures: list[str], stop: asyncio.Event) -> None:
    def probe() -> float:
        started = time.perf_counter()
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as response:
            response.read()
        return time.perf_counter() - started

    while not stop.is_set():
        try:
            latencies.append(await asyncio.to_thread(probe))
        except OSError as exc:
            failures.append(str(exc))
        await asyncio.sleep(0.25)


async def warm_up(url: str) -> float:
    """Open every page once, so imports and caches do not count as load."""
    started = time.perf_counter()
    for page in (HOME.url_path, *(tool.url_path for tool in TOOLS), LESSONS_PAGE.url_path):
        async with Session(url, page) as session:
            await session.open()
    return time.perf_counter() - started


async def level(url: str, pid: int, sessions: int, args: argparse.Namespace) -> tuple[str, str]:
    warm = await warm_up(url)
    await asyncio.sleep(2)
    before = rss_bytes(pid)
    sampler = MemorySampler(pid).start()
    latencies: list[float] = []
    health_failures: list[str] = []
    stop = asyncio.Event()
    health_task = asyncio.create_task(health_sampler(url, latencies, health_failures, stop))
    learners = [Learner(i, "") for i in range(sessions)]
    rng = random.Random(args.seed)

    async def staggered(learner: Learner, delay: float, seed: int) -> None:
        await asyncio.sleep(delay)
        await learner_run(url, learner, random.Random(seed), args.train_seconds, args.run_timeout,
                          args.link)

    started = time.monotonic()
    tasks = [
        asyncio.create_task(staggered(learner, rng.uniform(0, args.ramp), rng.randrange(2**31)))
        for learner in learners
    ]
    _, late = await asyncio.wait(tasks, timeout=args.train_seconds + args.ramp + 120)
    for task in late:  # bounded: a learner stuck past the limit is cancelled and reported
        task.cancel()
    await asyncio.gather(*late, return_exceptions=True)
    load_s = time.monotonic() - started
    stop.set()
    await health_task
    closed_at = time.monotonic()
    while time.monotonic() - closed_at < args.after:
        await asyncio.sleep(1)
    await sampler.stop()
    after = rss_bytes(pid)

    runs = [r for learner in learners for r in learner.runs]
    times = [r.wall_s for r in runs if r.finished]
    firsts = [learner.first_page_s for learner in learners if learner.first_page_s]
    exceptions = [(learner.link, e) for learner in learners for r in learner.runs for e in r.exceptions]
    guards = [(learner.link, r.guard_text) for learner in learners for r in learner.runs if r.guard_panel]
    unfinished = [
        (learner.link, r.error or r.status) for learner in learners for r in learner.runs if not r.finished
    ]

    print(
        f"\n== load: {sessions} concurrent sessions "
        f"(warm-up {warm:.1f}s, load {load_s:.0f}s, ramp {args.ramp:.0f}s)"
    )
    print(
        f"script time, all {len(times)} runs: p50 {percentile(times, 50):.3f}s  "
        f"p95 {percentile(times, 95):.3f}s  "
        f"max {max(times, default=0):.3f}s"
    )
    print(
        f"first page complete (connect to script_finished): p50 {percentile(firsts, 50):.2f}s  "
        f"p95 {percentile(firsts, 95):.2f}s  max {max(firsts, default=0):.2f}s"
    )
    print(
        f"health latency, {len(latencies)} samples: p50 {1000 * percentile(latencies, 50):.1f} ms  "
        f"p95 {1000 * percentile(latencies, 95):.1f} ms  max {1000 * max(latencies, default=0):.1f} ms  "
        f"failures {len(health_failures)}"
    )
    busy = sum(learner.busy for learner in learners)
    print(
        f"errors: exceptions {len(exceptions)}, guard panels {len(guards)}, "
        f"unfinished runs {len(unfinished)}, "
        f"learner errors {sum(1 for learner in learners if learner.error)}, busy messages {busy} "
        f"(learners told busy: {sum(1 for learner in learners if learner.busy)})"
    )
    for link, text in exceptions:
        print(f"  EXCEPTION {link}: {text[:200]}")
    for link, text in guards:
        print(f"  GUARD {link}: {text[:200]}")
    for link, why in unfinished:
        print(f"  UNFINISHED {link}: {why}")
    print("training progress per learner:")
    for learner in learners:
        print(
            f"  #{learner.index:<2} {learner.progress:<16} plays {learner.plays}  "
            f"frames {learner.frames:<4} lapses {learner.lapses:<2} "
            f"busy {learner.busy:<3} first page {learner.first_page_s:.2f}s  {learner.link[:70]}"
            + (f"  ERROR {learner.error}" if learner.error else "")
        )
    print(
        f"server memory (with children): before {mib(before)}, peak {mib(sampler.peak)}, "
        f"{args.after:.0f}s after the sessions closed {mib(after)}"
    )
    steps = [int(x.progress.split(",", 1)[1].split()[0].replace(",", ""))
             for x in learners if x.progress.endswith(" steps")]
    finished = sum(x.finished for x in learners)
    progress = (f"{len(steps)} of {sessions} learners training ({min(steps)}-{max(steps)} optimizer "
                f"steps), {finished} runs finished") if steps else "no learner trained"
    errors = len(exceptions) + len(guards) + len(unfinished) + sum(1 for x in learners if x.error)
    return (
        f"{sessions} learners at once on one server ({args.link or 'a mix of pages'}, arriving over "
        f"{args.ramp:.0f} s, each training up to {args.train_seconds:.0f} s)",
        f"first page p50 {percentile(firsts, 50):.2f} s, p95 {percentile(firsts, 95):.2f} s, max "
        f"{max(firsts, default=0):.2f} s; script time p95 {percentile(times, 95):.3f} s; health p95 "
        f"{1000 * percentile(latencies, 95):.0f} ms (max {1000 * max(latencies, default=0):.0f} ms), "
        f"{len(health_failures)} failed; {errors} errors, {busy} busy messages; {progress}; "
        f"memory {mib(before)} -> {mib(sampler.peak)} (peak) -> {mib(after)} "
        f"{args.after:.0f} s after",
    )


def main() -> None:
    run = Run("load", "A class of learners at once on one server")
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, nargs="+", default=[10, 30])
    parser.add_argument("--train-seconds", type=float, default=30, help="the most each learner trains")
    parser.add_argument("--ramp", type=float, default=5, help="learners arrive over this many seconds")
    parser.add_argument("--link", help="every learner opens this link (e.g. /moons_trainer?epochs=2)")
    parser.add_argument("--after", type=float, default=60, help="seconds to wait after closing, for memory")
    parser.add_argument("--run-timeout", type=float, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--url", help="a running server instead of a fresh one per level")
    parser.add_argument("--pid", type=int, default=0, help="with --url: its pid, for memory")
    args = parser.parse_args()
    if args.link:
        run.name += "_link"
        run.title += f", all opening `{args.link}`"
    rows = []
    for sessions in args.sessions:
        if args.url:
            rows.append(asyncio.run(level(args.url.rstrip("/"), args.pid, sessions, args)))
            continue
        with Server(log_path=f"/tmp/load_server_{sessions}.log") as server:
            rows.append(asyncio.run(level(server.url, server.pid, sessions, args)))
    run.save(rows)


if __name__ == "__main__":
    main()
