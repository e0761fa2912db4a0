"""What one live frame costs the browser: Chromium's CPU per frame drawn, by process and thread.

    .venv/bin/python -m bench.live_frame_cost          # 1 tab
    .venv/bin/python -m bench.live_frame_cost 3        # 3 tabs, each its own learner
    .venv/bin/python -m bench.live_frame_cost --save   # docs/figures/live_frame_cost.json (_3 for 3 tabs)

Each tab opens the moons trainer on a run long enough not to end (2,000 epochs), presses Play,
waits until its view draws frames, and then, over SECONDS of steady playing, this script reads
the CPU time of every Chromium thread (and Playwright's driver's) from /proc. It prints the
frames per second each tab drew and the CPU per frame drawn (every tab's frames together), in
all and for the busiest threads: the renderer's main thread (JavaScript, style, layout, the
canvases' raster), its compositor and raster workers, and the GPU process's VizCompositorThread
(with --disable-gpu, Chromium composites the page in software there). It also prints the
server's CPU per frame: its training threads (the niced ones, workbench/common/jobs.py) and the
rest (the event loop answering the frames, page runs).

Unlike bench/live_frames.py, the Play click's and the run's end's page reruns are left out:
this is the cost of a frame, for changes to static/live/*.js. Linux only (/proc).
"""
from __future__ import annotations

import argparse
import collections
import os
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench.live_frames import processes
from harness.app import serve
from harness.chromium import SETTLED, launch
from harness.figures import Run
from harness.live_view import LIVE_VIEW

SECONDS = 10
RUN = "/moons_trainer?epochs=2000&speed=max"     # the lesson preset, long enough to play throughout
SHOWN = 10                              # threads listed


def thread_cpu() -> collections.Counter:
    """CPU seconds so far of every thread of Chromium, of Playwright's driver and of the server,
    keyed by (process type, thread name); the server's threads as training or the rest. Chromium
    rewrites its command line into one string (`processes` reads it as one)."""
    ticks = os.sysconf("SC_CLK_TCK")
    found: collections.Counter = collections.Counter()
    for pid, _, command in processes():
        words = command.split()
        if not words:
            continue
        if "streamlit" in " ".join(words[:3]):
            kind = "server"
        elif "playwright" in words[0] or Path(words[0]).name == "node":
            kind = "driver"
        elif "chromium" in words[0]:
            kind = next((w.split("=", 1)[1] for w in words if w.startswith("--type=")), "browser")
        else:
            continue
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
                name = stat[stat.index("(") + 1:stat.rindex(")")]
                fields = stat.rsplit(")", 1)[1].split()
                if kind == "server":     # its training threads are the niced ones (jobs.py)
                    name = "training" if int(fields[16]) > 0 else "the rest"
                found[(kind, name)] += (int(fields[11]) + int(fields[12])) / ticks
        except (OSError, ValueError):
            continue            # a process or thread that ended while being read
    return found


def measure(tabs: int) -> list[tuple[str, str]]:
    with serve() as url, sync_playwright() as playwright:
        browser = launch(playwright)
        pages = []
        for _ in range(tabs):
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.set_default_timeout(180_000)
            page.goto(url + RUN)
            page.wait_for_function(f"() => ({LIVE_VIEW})() !== null")
            page.wait_for_selector(SETTLED)
            pages.append(page)
        for page in pages:
            page.locator(".st-key-mt_play button").first.click()
        for page in pages:
            page.wait_for_function(f"() => {{ const v = ({LIVE_VIEW})(); "
                                   "return v && v.state === 'playing' && v.frames > 10; }")
            page.wait_for_selector(SETTLED)     # the Play click's rerun is drawn: only frames now

        def frames() -> int:
            return sum(page.evaluate(LIVE_VIEW)["frames"] for page in pages)

        frames_before, cpu_before, started = frames(), thread_cpu(), time.perf_counter()
        time.sleep(SECONDS)
        cpu_after, elapsed = thread_cpu(), time.perf_counter() - started
        drawn = frames() - frames_before
        states = [page.evaluate(LIVE_VIEW)["state"] for page in pages]
        browser.close()
    if "paused" in states or drawn == 0:
        raise SystemExit(f"a run stopped playing while measured: {states}, {drawn} frames")
    used = {key: cpu_after[key] - cpu_before.get(key, 0.0) for key in cpu_after}
    chromium = sum(v for (kind, _), v in used.items() if kind not in ("driver", "server"))
    print(f"{tabs} tab{'s' if tabs > 1 else ''} playing, {elapsed:.1f} s: "
          f"{drawn / elapsed / tabs:.1f} frames/s in each")
    print(f"  Chromium, every process  {1000 * chromium / drawn:6.2f} ms per frame "
          f"({chromium / elapsed:.2f} cores)")
    for (kind, name), seconds in sorted(used.items(), key=lambda item: -item[1])[:SHOWN]:
        if seconds > 0 and kind != "server":
            print(f"  {kind:12s} {name:16s} {1000 * seconds / drawn:6.2f} ms per frame")
    for part in ("training", "the rest"):
        seconds = used.get(("server", part), 0.0)
        print(f"  server, {part:16s} {1000 * seconds / drawn:6.2f} ms per frame "
              f"({seconds / elapsed:.2f} cores)")
    server = {part: used.get(("server", part), 0.0) for part in ("training", "the rest")}
    busiest = [(key, s) for key, s in sorted(used.items(), key=lambda item: -item[1])[:SHOWN]
               if s > 0 and key[0] != "server"][:3]
    return [(f"{tabs} tab(s) playing the moons trainer (`{RUN}`) for {elapsed:.0f} s: frames drawn per "
             "second in each tab, Chromium's CPU per frame (every process)",
             f"{drawn / elapsed / tabs:.1f} frames/s; {1000 * chromium / drawn:.2f} ms per frame "
             f"({chromium / elapsed:.2f} cores)"),
            ("the busiest Chromium threads, CPU per frame",
             "; ".join(f"{kind} {name} {1000 * s / drawn:.2f} ms" for (kind, name), s in busiest)),
            ("the server's CPU per frame: training threads, the rest",
             f"{1000 * server['training'] / drawn:.2f} ms, {1000 * server['the rest'] / drawn:.2f} ms")]


def main() -> None:
    run = Run("live_frame_cost", "What one live frame costs the browser")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tabs", nargs="?", type=int, default=1, help="learners playing at once (1)")
    tabs = parser.parse_args().tabs
    if tabs != 1:
        run.name += f"_{tabs}"
    run.save(measure(tabs))


if __name__ == "__main__":
    main()
