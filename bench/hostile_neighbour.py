"""A hostile neighbour: ten learners train while one more tab does something heavy, in a loop.

The trainers open the moons trainer at its largest network and press Play; each then asks for
its frames over the frame route's WebSocket, ten a second, as the live view does (every frame
renews the run's lease), and reads the optimizer steps from the frame's status line. For each
case, the trainers' steps per second over the same window are printed against the window
without a neighbour, with how long a fresh home page took to open meanwhile:

- none:        nothing else runs: before the first case and after every case, so each case
               window is judged against the quiet windows on either side of it, each trainer
               against its own pace (the fair floor is a promise to every trainer: the slowest
               trainer's share is the figure); `--rounds` repeats the cases
- autograd:    a tab re-runs the heaviest program the autograd page allows, a new program text
               each time (so nothing is cached)
- workers:     two tabs each open the batch iterator with two DataLoader workers, again and again
               (every open is a worker run)
- frames:      thirty sockets ask for the neighbour's own frames as fast as the server answers
- pitfalls:    a tab opens the moons trainer's pitfall lab and presses Run again and again (its
               runs are seeded, trained once for the whole server and shared after that, so
               what is left is the page's reruns)

The server is `streamlit run streamlit_app.py`, the app's one entry.

Run: .venv/bin/python -m bench.hostile_neighbour [--window 20] [--trainers 10] [--rounds 1]
     [--cases autograd workers frames pitfalls] [--save]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import re
import statistics
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from websockets.asyncio.client import connect
from websockets.exceptions import WebSocketException

from harness.figures import Run
from harness.st_client import Session, follow_frames, string_state
from harness.app import Server


# The largest network the settings table allows, on the most points, for many epochs: no run
# ends inside a window.
TRAIN_QUERY = "n=5000&hidden=256,256,256,256&batch=256&epochs=500&speed=max"
STEPS = re.compile(r"([\d,]+) optimizer steps")
# 99 x 29 scalar statements: just under the interpreter's statement cap, every one recorded in
# the graph the page then draws.
HEAVY_PROGRAM = ("x = torch.tensor(1.0, requires_grad=True)\ny = x\nfor i in range(99):\n"
                 "    for j in range(29):\n        y = y * 1.0001 + x\n")
WORKER_QUERY = "n=2000&batch=8&workers=2&epochs=2"
FLOOD_SOCKETS = 30


@dataclass
class Trainer:
    session: Session
    frame_url: str
    steps: int = 0
    lapses: int = 0     # frames that said the run had ended: its lease lapsed
    error: str | None = None


@dataclass
class Window:
    case: str
    steps_per_s: list[float] = field(default_factory=list)
    home_s: list[float] = field(default_factory=list)
    neighbour_runs: int = 0
    neighbour_s: list[float] = field(default_factory=list)
    lapses: int = 0

    @property
    def mean_steps(self) -> float:
        return statistics.fmean(self.steps_per_s) if self.steps_per_s else 0.0


def ws_url(base: str, path: str) -> str:
    return base.replace("http://", "ws://", 1) + "/" + path.lstrip("/")


async def start_trainer(url: str) -> Trainer:
    session = Session(url, "moons_trainer", TRAIN_QUERY, run_timeout=120)
    await session.open()
    await session.click("mt_play")
    if session.poll_url is None:
        raise RuntimeError("the moons trainer named no frame route")
    return Trainer(session, session.poll_url)


async def keep_watching(trainer: Trainer, stop: asyncio.Event) -> None:
    """Follow the trainer's frames as the live view does; a frame that says the run ended (its
    lease lapsed: the server heard nothing for too long) makes the page run again, as the
    view's trigger does, and the run plays on."""
    def read(status: str) -> bool:
        match = STEPS.search(status)
        trainer.steps = int(match[1].replace(",", "")) if match else trainer.steps
        return stop.is_set()

    try:
        while not stop.is_set():
            if await follow_frames(trainer.session, math.inf, read):
                trainer.lapses += 1
                await trainer.session.rerun()
    except (WebSocketException, OSError) as exc:
        trainer.error = f"frames: {exc}"


async def open_home(url: str) -> float:
    started = time.perf_counter()
    async with Session(url, "", run_timeout=120) as session:
        result = await session.open()
    if not result.finished:
        raise RuntimeError(f"home page: {result.error or result.status}")
    return time.perf_counter() - started


# -- neighbours: each loops until `stop`, adding one entry to `times` per heavy thing done --------

async def autograd_neighbour(url: str, stop: asyncio.Event, times: list[float]) -> None:
    async with Session(url, "autograd_graph", run_timeout=120) as session:
        await session.open()
        runs = 0
        while not stop.is_set():
            runs += 1
            code = HEAVY_PROGRAM + f"# run {runs}\n"       # a new text: nothing cached applies
            started = time.perf_counter()
            await session.navigate("autograd_graph", "code=" + urllib.parse.quote(code))
            times.append(time.perf_counter() - started)


async def workers_neighbour(url: str, stop: asyncio.Event, times: list[float]) -> None:
    async def one_tab() -> None:
        while not stop.is_set():
            started = time.perf_counter()
            async with Session(url, "batch_iterator", WORKER_QUERY, run_timeout=120) as session:
                await session.open()
            times.append(time.perf_counter() - started)
    await asyncio.gather(one_tab(), one_tab())


async def frames_neighbour(url: str, stop: asyncio.Event, times: list[float]) -> None:
    own = await start_trainer(url)

    async def flood() -> None:
        # The server takes two sockets per token and refuses the rest's handshakes: those
        # sockets end here, and the flood is what the accepted ones can ask.
        with contextlib.suppress(WebSocketException, OSError):
            async with connect(ws_url(url, own.frame_url + "/stream"), max_size=None) as socket:
                while not stop.is_set():
                    started = time.perf_counter()
                    await socket.send("0")
                    await socket.recv()
                    times.append(time.perf_counter() - started)
    try:
        await asyncio.gather(*(flood() for _ in range(FLOOD_SOCKETS)))
    finally:
        await own.session.close()


async def pitfalls_neighbour(url: str, stop: asyncio.Event, times: list[float]) -> None:
    async with Session(url, "moons_trainer", run_timeout=120) as session:
        await session.open()
        await session.set_value("mt_tabs", string_state("Pitfall lab"))
        while not stop.is_set():
            started = time.perf_counter()
            await session.click("mt_pitfall_run")
            times.append(time.perf_counter() - started)


NEIGHBOUR_TEXT = {
    "autograd": "a typed program of 99 x 29 statements re-run", "workers": "two tabs opening the batch "
    "iterator with 2 workers", "frames": f"{FLOOD_SOCKETS} sockets on one frame token",
    "pitfalls": "the pitfall lab's Run pressed again and again (trained once, then shared)",
}
NEIGHBOURS: dict[str, Callable[[str, asyncio.Event, list[float]], Awaitable[None]]] = {
    "autograd": autograd_neighbour, "workers": workers_neighbour, "frames": frames_neighbour,
    "pitfalls": pitfalls_neighbour,
}


async def measure(url: str, trainers: list[Trainer], case: str, seconds: float) -> Window:
    window = Window(case)
    stop = asyncio.Event()
    neighbour = NEIGHBOURS.get(case)
    task = asyncio.create_task(neighbour(url, stop, window.neighbour_s)) if neighbour else None
    await asyncio.sleep(min(3.0, seconds / 4))          # the neighbour gets going first
    before = [t.steps for t in trainers]
    lapsed = sum(t.lapses for t in trainers)
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        window.home_s.append(await open_home(url))
        await asyncio.sleep(max(0.0, min(3.0, seconds - (time.monotonic() - started))))
    elapsed = time.monotonic() - started
    window.steps_per_s = [(t.steps - b) / elapsed for t, b in zip(trainers, before, strict=True)]
    window.lapses = sum(t.lapses for t in trainers) - lapsed
    stop.set()
    if task is not None:
        try:
            await asyncio.wait_for(task, 120)
        except Exception as exc:  # noqa: BLE001 - a neighbour's failure is a finding, printed
            print(f"  neighbour {case} failed: {type(exc).__name__}: {exc}")
    window.neighbour_runs = len(window.neighbour_s)
    return window


async def bench(url: str, args: argparse.Namespace) -> list[tuple[str, str]]:
    await open_home(url)                                  # imports and caches do not count
    trainers = [await start_trainer(url) for _ in range(args.trainers)]
    stop = asyncio.Event()
    watchers = [asyncio.create_task(keep_watching(t, stop)) for t in trainers]
    # none, then each case followed by none again, `rounds` times: every case window is judged
    # against the quiet windows on either side of it, so a machine whose other load comes and
    # goes (other jobs on a shared machine) shows as the spread between rounds, not as a share.
    sequence = ["none"] + [step for _ in range(args.rounds) for case in args.cases
                           for step in (case, "none")]
    windows: list[Window] = []
    try:
        for case in sequence:
            windows.append(await measure(url, trainers, case, args.window))
    finally:
        stop.set()
        await asyncio.gather(*watchers, return_exceptions=True)
        for trainer in trainers:
            await trainer.session.close()
    quiet = [w for w in windows if w.case == "none"]

    def beside(index: int) -> list[float]:
        """Each trainer's pace in the quiet windows before and after window `index`."""
        return [(a + b) / 2 for a, b in zip(windows[index - 1].steps_per_s,
                                            windows[index + 1].steps_per_s, strict=True)]

    def shares(index: int) -> tuple[float, float, float]:
        """(the mean trainer's share, the slowest trainer's, the median trainer's), each trainer
        against its own pace beside the window: the fair floor is a promise to every trainer."""
        window, base = windows[index], beside(index)
        ratios = [pace / own if own else 0.0
                  for pace, own in zip(window.steps_per_s, base, strict=True)]
        mean_base = statistics.fmean(base) if base else 0.0
        return (window.mean_steps / mean_base if mean_base else 0.0, min(ratios, default=0.0),
                statistics.median(ratios) if ratios else 0.0)

    print(f"\n== hostile neighbour: {args.trainers} trainers ({TRAIN_QUERY}), {args.window:.0f} s "
          f"windows, {args.rounds} round(s)")
    print(f"{'case':<10} {'steps/s':>8} {'of base':>8} {'slowest':>8} {'home p50':>9} {'home max':>9} "
          f"{'neighbour runs':>15} {'run p50':>8} {'lapses':>7} {'trainer min':>12} "
          f"{'trainer med':>12}")
    for index, window in enumerate(windows):
        share = shares(index) if window.case != "none" else None
        columns = (f"{share[0]:8.2f}" if share else f"{'':8}",
                   f"{share[1]:12.2f} {share[2]:12.2f}" if share else "")
        print(f"{window.case:<10} {window.mean_steps:8.2f} {columns[0]} "
              f"{min(window.steps_per_s, default=0.0):8.2f} {statistics.median(window.home_s):8.2f}s "
              f"{max(window.home_s):8.2f}s {window.neighbour_runs:>15} "
              f"{statistics.median(window.neighbour_s) if window.neighbour_s else 0:7.2f}s "
              f"{window.lapses:>7} {columns[1]}")
    errors = [t.error for t in trainers if t.error]
    if errors:
        print("trainer errors:", *errors, sep="\n  ")
    rows = [(f"{args.trainers} trainers at the largest network ({TRAIN_QUERY}) with nothing else running, "
             f"{args.window:.0f} s windows: steps/s per trainer",
             ", ".join(f"{w.mean_steps:.2f}" for w in quiet) + " (each quiet window, in order)")]
    for case in args.cases:
        indices = [i for i, w in enumerate(windows) if w.case == case]
        measured = [shares(i) for i in indices]
        cases = [windows[i] for i in indices]
        rows.append((
            f"beside the {case} neighbour: {NEIGHBOUR_TEXT[case]} ({len(indices)} window(s), each "
            "against the quiet windows beside it)",
            "trainers' mean pace " + ", ".join(f"{m[0]:.2f}" for m in measured) + " of their "
            "own; slowest trainer " + ", ".join(f"{m[1]:.2f}" for m in measured) + "; median "
            "trainer " + ", ".join(f"{m[2]:.2f}" for m in measured) + "; a fresh home page "
            f"opened in {max(max(w.home_s) for w in cases):.2f} s at most; "
            f"{sum(w.neighbour_runs for w in cases)} neighbour runs; "
            f"{sum(w.lapses for w in cases)} leases lapsed"))
    if errors:
        rows.append(("trainer errors", "; ".join(errors)))
    return rows


def main() -> None:
    run = Run("hostile_neighbour", "A hostile neighbour beside ten training learners")
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trainers", type=int, default=10)
    parser.add_argument("--window", type=float, default=20, help="seconds each case is measured")
    parser.add_argument("--cases", nargs="+", default=list(NEIGHBOURS), choices=list(NEIGHBOURS))
    parser.add_argument("--rounds", type=int, default=1,
                        help="how many times each case is measured, between quiet windows")
    parser.add_argument("--url", help="a running `streamlit run streamlit_app.py` instead of a fresh one")
    args = parser.parse_args()
    if args.window < 5:
        parser.error("--window must be at least 5 seconds: a home page opens in one")
    if args.url:
        rows = asyncio.run(bench(args.url.rstrip("/"), args))
    else:
        with Server(log_path="/tmp/hostile_neighbour_server.log") as server:
            rows = asyncio.run(bench(server.url, args))
    run.save(rows)


if __name__ == "__main__":
    main()
