"""Live training as a learner sees it: a real server, headless Chromium, the lesson preset.

    .venv/bin/python -m bench.live_frames            # 1 learner, then 3 at once; both placements
    .venv/bin/python -m bench.live_frames 3 --placement split --repeats 3
    .venv/bin/python -m bench.live_frames 1 --placement shared --network    # the network view open

For 1 learner and for 3 learners pressing Play at once, prints:

- frames drawn per second in the browser while it trains (the live view's own draw counter);
- bytes per frame: everything the server sent while the run trained, from Chromium's DevTools
  protocol (the websocket's messages, Streamlit's own included, and the frame route's HTTP
  responses with their headers), divided by the frames drawn;
- with `--network` (the network view open: net=1), the network pictures drawn per second beside
  the boundary's frames, and the largest frame the frame route sent (socket message or HTTP
  response) beside the mean;
- the browser main thread's round trip (a trivial `page.evaluate`) during training, median
  and 95th percentile;
- Chromium's CPU time (every process: renderers, GPU, browser) per frame drawn, from /proc;
- the wall time of the preset's 50 epochs in the browser (the Play click reaching the page to
  the live view painting the weights of epoch 50, both timed in the page), and the same run
  trained without a browser, through the same scheduler (3 at once for 3 learners), before the
  first browser run and right after each: a run's ratio is over the mean of the training-only
  runs either side of it. The browser runs are repeated (`--repeats`, Reset between them) and
  the verdict is the median ratio, every run's printed beside it, with the slowest browser run
  over the fastest training-only run for the worst case;
- the machine's load during the browser run and the training-only run: the cores' busy time
  and the share the hypervisor stole for other guests (it moves the ratio between runs);
- Pause latency: from the click reaching the page (the event's time stamp) to the live view
  painting the run paused (the view stops the run through the frame route as the click
  arrives), timed in the page, four times on the first learner's restarted run while the
  other learners' runs train again (the preset with 500 epochs, so that no run ends first);
  then when the page has followed (Streamlit's rerun for the button: Play enabled, the results
  drawn), and how many epochs the view's counter moved from the click to the page's final
  frame (what the run trained between the frame on screen at the click and its stop; a preset
  epoch is about 10 ms of training).
  Playwright's own click call (it first waits for the button to be visible, stable over two
  animation frames and hit by the pointer) adds 100-400 ms on a loaded machine that no learner's
  click pays; the figure through that call is printed beside it.

Where the browsers sit (`--placement`):

- `shared`: Chromium, this script and the server share every core at equal priority, as on a
  single teacher's laptop;
- `split`: the server gets core 0 to itself and Chromium, Playwright and this script the
  others, as in a class where each browser runs on its learner's own machine. The
  training-only run is measured on the server's core too.

`both` (the default) runs one, then the other, each with a fresh server.

Targets (the issues'): >= 10 frames/s, <= 10 KB per frame, Pause within 300 ms, round trip
under 50 ms, the browser run within 1.5x of the training-only time; with the network view open
(issue 30), >= 4 network pictures/s and every frame <= 25 KB, the rest as without it. The
learners train at speed=max: at the preset's own pace (5 epochs a second) the run's wall time is
the pace's, not the view's. On a shared machine read
absolute times as upper bounds: the server, Chromium and this script share its cores.
"""
from __future__ import annotations

import argparse
import base64
import dataclasses
import os
import statistics
import threading
import time
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import sync_playwright

from harness.app import serve
from harness.chromium import launch
from harness.live_view import LIVE_VIEW

TARGETS = {"frames/s": (">=", 10), "KB/frame": ("<=", 10), "pause ms": ("<=", 300),
           "round trip ms": ("<", 50), "browser / training": ("<=", 1.5)}
# With the network view open (--network): its pictures, and a frame that carries one.
NETWORK_TARGETS = {**TARGETS, "KB/frame": ("<=", 25), "largest frame KB": ("<=", 25),
                   "network/s": (">=", 4)}
PRESET_PATH = "/moons_trainer?speed=max"

# In the page, so that the times are the page's own: when the Play click arrived and when the
# view painted epoch 50 (looked for every 20 ms, then the next animation frame).
WATCH_RUN = """(liveView) => {
  const bench = window.__bench = {clickAt: null, paintedAt: null, framesAtClick: 0, framesAtEnd: 0,
                                  networkAtClick: 0, networkAtEnd: 0};
  document.addEventListener('click', (event) => {
    if (!event.target.closest('.st-key-mt_play') || bench.clickAt !== null) return;
    bench.clickAt = event.timeStamp;
    bench.framesAtClick = liveView().frames;
    bench.networkAtClick = liveView().network;
    const check = setInterval(() => {
      const v = liveView();
      if (v && v.epoch >= 50) {
        clearInterval(check);
        bench.framesAtEnd = v.frames;
        bench.networkAtEnd = v.network;
        requestAnimationFrame(() => { bench.paintedAt = performance.now(); });
      }
    }, 20);
  }, true);
}"""
RUN_TIMES = "() => window.__bench && window.__bench.paintedAt > 0 ? window.__bench : null"

# From the Pause click arriving (the event's own time stamp: the view's capture listener runs
# before this one) to the view painting the run paused, and on to the page following (Play
# enabled); the epoch the view showed at the click.
WATCH_PAUSE = """(liveView) => {
  const pause = window.__pause = {clickAt: null, pausedAt: null, followedAt: null, epochAt: null};
  document.addEventListener('click', (event) => {
    if (!event.target.closest('.st-key-mt_pause') || pause.clickAt !== null) return;
    pause.clickAt = event.timeStamp;
    pause.epochAt = liveView().epoch;
    const check = setInterval(() => {
      const v = liveView(), play = document.querySelector('.st-key-mt_play button');
      // 'pausing' is what the learner sees at once; 'paused' follows with the server's frame.
      const paused = v && v.state !== 'playing' && !v.status.includes('training');
      if (paused && pause.pausedAt === null) {
        pause.pausedAt = 0;
        requestAnimationFrame(() => { pause.pausedAt = performance.now(); });
      }
      if (paused && play && !play.disabled) {
        clearInterval(check);
        requestAnimationFrame(() => { pause.followedAt = performance.now(); });
      }
    }, 4);
  }, true);
}"""


class Learner:
    """One browser context (one Streamlit session) on the moons trainer, with its websocket
    bytes counted through the DevTools protocol."""

    def __init__(self, browser, url: str, query: str = "") -> None:
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.page = self.context.new_page()
        self.page.set_default_timeout(180_000)
        self.received = 0
        self.largest = 0            # the largest frame the frame route sent while counting
        self.counting = False
        self.frame_sockets: set[str] = set()
        cdp = self.context.new_cdp_session(self.page)
        cdp.send("Network.enable")
        cdp.on("Network.webSocketCreated", self._socket)
        cdp.on("Network.webSocketFrameReceived", self._frame)
        cdp.on("Network.requestWillBeSent", self._request)
        cdp.on("Network.loadingFinished", self._loaded)
        self.frame_requests: set[str] = set()
        self.url, self.query = url, query
        self.page.goto(url + PRESET_PATH + query)
        self.page.wait_for_function(f"() => ({LIVE_VIEW})() !== null")
        self.page.evaluate(f"() => ({WATCH_RUN})({LIVE_VIEW})")

    def _socket(self, event: dict) -> None:
        if "/api/frames/" in event["url"]:
            self.frame_sockets.add(event["requestId"])

    def _frame(self, event: dict) -> None:
        if not self.counting:
            return
        response = event["response"]
        payload = response["payloadData"]
        size = len(base64.b64decode(payload)) if response["opcode"] == 2 else len(payload.encode())
        self.received += size
        if event["requestId"] in self.frame_sockets:
            self.largest = max(self.largest, size)

    def _request(self, event: dict) -> None:
        if "/api/frames/" in event["request"]["url"]:
            self.frame_requests.add(event["requestId"])

    def _loaded(self, event: dict) -> None:
        if self.counting and event["requestId"] in self.frame_requests:
            self.received += int(event["encodedDataLength"])
            self.largest = max(self.largest, int(event["encodedDataLength"]))

    def live(self) -> dict:
        return self.page.evaluate(LIVE_VIEW)

    def settled(self) -> None:
        self.page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]")

    def reset(self) -> None:
        """The same preset run again from epoch 0 (Reset), watched afresh."""
        self.settled()
        self.button("mt_reset").click()
        self.page.wait_for_function(f"() => {{ const v = ({LIVE_VIEW})(); "
                                    "return v && v.epoch === 0 && v.state === 'paused'; }")
        self.settled()
        self.page.evaluate(f"() => ({WATCH_RUN})({LIVE_VIEW})")

    def button(self, key: str):
        return self.page.locator(f".st-key-{key} button").first


def train_in_browser(learners: list[Learner]) -> list[dict]:
    """Press Play on every learner at once; measure each until its 50 epochs are done."""
    for learner in learners:
        learner.settled()
    starts = {}
    browser_cpu = chromium_cpu_seconds()
    for learner in learners:
        learner.received, learner.largest, learner.counting = 0, 0, True
        starts[id(learner)] = time.perf_counter()
        learner.button("mt_play").click()
    results = {}
    trips: dict[int, list[float]] = {id(learner): [] for learner in learners}
    deadline = time.perf_counter() + 600
    while len(results) < len(learners):
        if time.perf_counter() > deadline:
            raise RuntimeError(f"the runs did not reach epoch 50 in 600 s: {[lr.live() for lr in learners]}")
        for learner in learners:
            if id(learner) in results:
                continue
            started = time.perf_counter()
            times = learner.page.evaluate(RUN_TIMES)       # the round trip, and the run's times
            trips[id(learner)].append(time.perf_counter() - started)
            if times is not None:
                learner.counting = False
                wall = (times["paintedAt"] - times["clickAt"]) / 1000
                frames = times["framesAtEnd"] - times["framesAtClick"]
                results[id(learner)] = {"wall": wall, "frames": frames, "bytes": learner.received,
                                        "network": times["networkAtEnd"] - times["networkAtClick"],
                                        "largest": learner.largest}
        time.sleep(0.25)                # sampling lightly: this script shares the cores too
    if browser_cpu is not None:
        browser_cpu = chromium_cpu_seconds() - browser_cpu
    out = []
    for learner in learners:
        r = results[id(learner)]
        t = sorted(trips[id(learner)])
        out.append({"frames/s": r["frames"] / r["wall"], "KB/frame": r["bytes"] / 1024 / max(r["frames"], 1),
                    "network/s": r["network"] / r["wall"], "largest frame KB": r["largest"] / 1024,
                    "round trip ms": 1000 * statistics.median(t),
                    "round trip p95 ms": 1000 * t[int(0.95 * (len(t) - 1))], "wall": r["wall"],
                    "chromium ms/frame": None if browser_cpu is None else
                    1000 * browser_cpu / max(sum(x["frames"] for x in results.values()), 1)})
    return out


@dataclasses.dataclass
class Pauses:
    """Pause, timed on the first learner: seconds to the view painted paused, through
    Playwright's click call, and to the page following; the epochs trained after the click."""

    in_page: list[float] = dataclasses.field(default_factory=list)
    through_playwright: list[float] = dataclasses.field(default_factory=list)
    page_follows: list[float] = dataclasses.field(default_factory=list)
    epochs_after: list[int] = dataclasses.field(default_factory=list)


def pause_latencies(learners: list[Learner], trials: int = 4) -> Pauses:
    """Every learner on the preset with 500 epochs (so that no run ends before its Pause), reset;
    Play the others', then on the first: Play, train a couple of epochs, Pause, `trials` times,
    while the others still train."""
    first, *others = learners
    for learner in learners:
        learner.page.goto(learner.url + PRESET_PATH + "&epochs=500" + learner.query)
        learner.page.wait_for_function(f"() => {{ const v = ({LIVE_VIEW})(); "
                                       "return v && v.status.includes('/ 500'); }")
        learner.settled()
        learner.button("mt_reset").click()
    for learner in learners:
        learner.page.wait_for_function(f"() => {{ const v = ({LIVE_VIEW})(); return v && v.epoch === 0; }}")
        learner.settled()
    for learner in others:
        learner.button("mt_play").click()
    pauses = Pauses()
    for _ in range(trials):
        first.settled()
        epoch = first.live()["epoch"]
        playing = (f"(e) => {{ const v = ({LIVE_VIEW})(); "
                   "const pause = document.querySelector('.st-key-mt_pause button'); "
                   "return v && v.state === 'playing' && v.epoch >= e + 2 && pause && !pause.disabled; }")
        for _ in range(3):      # on a starved core a click landing in the page's last rerun can be lost
            first.button("mt_play").click()
            try:
                first.page.wait_for_function(playing, arg=epoch, timeout=60_000)
                break
            except PlaywrightTimeout:
                first.settled()
        else:
            raise RuntimeError(f"Play did not start the first learner's run: {first.live()}")
        first.page.evaluate(f"() => ({WATCH_PAUSE})({LIVE_VIEW})")
        clicked = time.perf_counter()
        first.button("mt_pause").click()
        first.page.wait_for_function("() => window.__pause.pausedAt > 0", polling=50)
        pauses.through_playwright.append(time.perf_counter() - clicked)
        first.page.wait_for_function("() => window.__pause.followedAt !== null", polling=50)
        pause = first.page.evaluate("() => window.__pause")
        pauses.in_page.append((pause["pausedAt"] - pause["clickAt"]) / 1000)
        pauses.page_follows.append((pause["followedAt"] - pause["clickAt"]) / 1000)
        first.settled()         # the page's own run after the pause has drawn the final model
        pauses.epochs_after.append(first.live()["epoch"] - pause["epochAt"])
    return pauses


def training_only(learners: int) -> float:
    """The same preset run(s), right after, without a browser: through the same scheduler, so
    3 learners are 3 runs at once sharing the cores as on the server."""
    import torch

    torch.set_num_threads(1)
    from workbench.common.jobs import SCHEDULER, FairScheduler
    from workbench.moons_trainer.settings import PRESET
    from workbench.moons_trainer.training import TrainingSession

    scheduler = FairScheduler(cores=SCHEDULER.cores, niceness=SCHEDULER.niceness)  # the server's
    sessions = [TrainingSession(PRESET) for _ in range(learners)]

    def work_for(session):
        def work(seconds: float) -> bool:
            with session.lock:
                session.run_for(10**9, seconds)
                return not session.done
        return work

    stop = threading.Event()

    def renew():
        while not stop.is_set():
            for i in range(learners):
                scheduler.keep_alive(f"bench-{i}")
            time.sleep(0.1)

    renewer = threading.Thread(target=renew, daemon=True)
    started = time.perf_counter()
    for i, session in enumerate(sessions):
        scheduler.start(f"bench-{i}", work_for(session))
    renewer.start()
    assert scheduler.wait_until_idle(600)
    stop.set()
    return time.perf_counter() - started


def verdict(name: str, value: float, targets: dict = TARGETS) -> str:
    op, target = targets[name]
    ok = {"<=": value <= target, ">=": value >= target, "<": value < target}[op]
    return f"{'meets' if ok else 'MISSES'} {op} {target:g}"


CORES = os.cpu_count() or 1
ALL_CORES = set(range(CORES))
SERVER_CORES = {0}


def processes() -> list[tuple[int, int, str]]:
    """(pid, parent pid, command line) of every process, from /proc (Linux)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            found.append((int(entry), int(stat[1]), command))
    return found


class MachineLoad:
    """How busy the machine's cores were over a stretch, from /proc/stat: the cores' busy time,
    and the share the hypervisor gave to other guests (steal). On a shared virtual machine the
    steal grows when both cores are busy, which moves a run's times between runs."""

    def __init__(self) -> None:
        self.started, self.at = time.perf_counter(), self._times()

    @staticmethod
    def _times() -> tuple[float, float] | None:
        try:
            fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
        except (OSError, ValueError):
            return None
        user, nice, system, _idle, _iowait, irq, softirq, steal = fields
        return float(user + nice + system + irq + softirq), float(steal)

    def __str__(self) -> str:
        now = self._times()
        if self.at is None or now is None:
            return "unknown"
        ticks = os.sysconf("SC_CLK_TCK") * (time.perf_counter() - self.started)
        busy, stolen = ((b - a) / ticks for a, b in zip(self.at, now, strict=True))
        return f"{busy:.2f} of {CORES} cores busy, {100 * stolen / CORES:.0f}% stolen by the host"


def chromium_cpu_seconds() -> float | None:
    """CPU time used so far by every Chromium process (renderers, GPU, browser), or None where
    /proc cannot tell."""
    if not Path("/proc/self/stat").exists():
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid, _, command in processes():
        if "chromium" in command.split(" ")[0]:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(stat[11]) + int(stat[12])) / ticks
    return total


def pin_server(cores: set[int]) -> None:
    """Every thread of the server (this script's `streamlit` child) onto `cores`; the threads
    and processes it starts later inherit the setting."""
    (server,) = [pid for pid, parent, command in processes()
                 if parent == os.getpid() and "streamlit" in command]
    for tid in os.listdir(f"/proc/{server}/task"):
        os.sched_setaffinity(int(tid), cores)


def run(counts: tuple[int, ...], placement: str, repeats: int, network: bool = False) -> None:
    split = placement == "split"
    if split and CORES < 2:
        print("\nsplit placement needs 2 cores or more: skipped")
        return
    print(f"\n== placement {placement}: " + ("the server on core 0 alone; Chromium, Playwright and this "
                                              "script on the others" if split else
                                              "server, Chromium and this script share every core"))
    with serve() as url:
        if split:
            pin_server(SERVER_CORES)
            os.sched_setaffinity(0, ALL_CORES - SERVER_CORES)    # Chromium and its driver inherit it
        try:
            with sync_playwright() as playwright:
                browser = launch(playwright)
                for count in counts:
                    measure(browser, url, count, split, repeats, network)
                browser.close()
        finally:
            os.sched_setaffinity(0, ALL_CORES)


def measure(browser, url: str, count: int, split: bool, repeats: int, network: bool = False) -> None:
    learners = [Learner(browser, url, "&net=1" if network else "") for _ in range(count)]
    targets = NETWORK_TARGETS if network else TARGETS

    def alone_timed() -> tuple[float, str]:
        os.sched_setaffinity(0, SERVER_CORES if split else ALL_CORES)   # its threads inherit it
        load = MachineLoad()
        seconds = training_only(count)
        os.sched_setaffinity(0, ALL_CORES - SERVER_CORES if split else ALL_CORES)
        return seconds, str(load)

    # Training only before the first browser run and after every one (the tabs open and idle),
    # so each browser run sits between two: its ratio is over their mean, which cancels a host
    # drifting steadily faster or slower. This machine's speed moves by 20-40% from one run to
    # the next, more than the margin, so one pair decides nothing: the verdict is the median
    # over the repeats, and every repeat's ratio is printed.
    alone = [alone_timed()]
    runs, browser_loads = [], []
    for repeat in range(repeats):
        if repeat:
            for learner in learners:
                learner.reset()
        load = MachineLoad()
        runs.append(train_in_browser(learners))
        browser_loads.append(str(load))
        alone.append(alone_timed())
    view = " with the network view open (net=1)" if network else ""
    print(f"\n{count} learner{'s' if count > 1 else ''} pressing Play at once{view}, {repeats} times")
    every = [r for results in runs for r in results]
    names = ("frames/s", "network/s", "KB/frame", "largest frame KB", "round trip ms") if network else \
        ("frames/s", "KB/frame", "round trip ms")
    for name in names:
        values = [r[name] for r in every]
        shown = min(values) if name.endswith("/s") else max(values)
        spread = f"{min(values):.1f}-{max(values):.1f}"
        print(f"  {name:22s} {spread:28s} {verdict(name, shown, targets)}")
    p95 = max(r["round trip p95 ms"] for r in every)
    print(f"  {'round trip p95 ms':22s} {p95:.0f} (the worst run)")
    chromium = [c for c in (results[0]["chromium ms/frame"] for results in runs) if c is not None]
    if chromium:
        print(f"  {'Chromium CPU per frame':22s} {statistics.median(chromium):.1f} ms, median "
              "(every process, per frame drawn in any tab; Play and the end included)")
    ratios = []
    for repeat, results in enumerate(runs):
        worst = max(r["wall"] for r in results)
        around = (alone[repeat][0], alone[repeat + 1][0])
        ratios.append(worst / statistics.mean(around))
        walls = ", ".join(f"{r['wall']:.2f}" for r in results)
        print(f"  run {repeat + 1}: 50 epochs in the browser {walls} s; training only {around[0]:.2f} s "
              f"before, {around[1]:.2f} s after: {ratios[-1]:.2f}x; machine {browser_loads[repeat]}")
    print(f"  {'machine, training only':22s} {alone[-1][1]} (the last run)")
    ratio = statistics.median(ratios)
    strict = max(r["wall"] for results in runs for r in results) / min(seconds for seconds, _ in alone)
    print(f"  {'browser / training':22s} {ratio:<28.2f} {verdict('browser / training', ratio, targets)} "
          f"(median of {min(ratios):.2f}-{max(ratios):.2f}: each run's slowest browser over the mean "
          f"of the training-only runs either side; slowest of all over fastest of all {strict:.2f}x)")
    pauses = pause_latencies(learners)
    shown = ", ".join(f"{1000 * v:.0f}" for v in pauses.in_page)
    print(f"  {'pause ms':22s} {shown:28s} {verdict('pause ms', 1000 * max(pauses.in_page), targets)}")
    print(f"  {'pause ms, Playwright':22s} {', '.join(f'{1000 * v:.0f}' for v in pauses.through_playwright)} "
          "(from its click call)")
    print(f"  {'page follows ms':22s} {', '.join(f'{1000 * v:.0f}' for v in pauses.page_follows)} "
          "(Streamlit's rerun: Play enabled, results)")
    print(f"  {'epochs after the click':22s} {', '.join(str(e) for e in pauses.epochs_after)} "
          "(shown at the click to the page's final)")
    for learner in learners:
        learner.context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("counts", nargs="*", type=int, default=[1, 3], help="learners at once (1 3)")
    parser.add_argument("--placement", choices=("shared", "split", "both"), default="both")
    parser.add_argument("--repeats", type=int, default=5, help="browser runs per learner count (5)")
    parser.add_argument("--network", action="store_true",
                        help="with the network view open (net=1): its pictures/s and the largest frame too")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    view = ", the network view open" if args.network else ""
    print(f"{CORES} cores; lesson preset at speed=max, 50 epochs{view}; Chromium headless")
    for placement in (("shared", "split") if args.placement == "both" else (args.placement,)):
        run(tuple(args.counts), placement, args.repeats, args.network)


if __name__ == "__main__":
    main()
