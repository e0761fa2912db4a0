"""Click to paint: how long a learner waits after pressing each page's main control.

For each control, Chromium presses it `--clicks` times (15 by default) on a real server
(`streamlit run streamlit_app.py`, the app's one entry, with one learner) and times, inside the
page, from the click to the first animation frame after

- the script run the click started has finished (a fragment's run included: Streamlit's
  `data-test-script-state` went to "running" and back to "notRunning"),
- no element is still greyed out as stale (`data-stale="true"`), and
- the text the click must produce is on screen (for the moons trainer: in the live view's
  counter, which the frame route updates after the run).

That is the moment the learner sees the answer. It prints the median and the slowest per control,
and the median time until the browser handled the message that the script run was over. That is
not the server's time alone: the browser handles Streamlit's messages in order on its one main
thread, so drawing that blocks it (a graphviz layout, a Plotly chart) delays that message too.

The server's time is measured in the server (bench/script_timer.py wraps the call in which
Streamlit handles a rerun request: the widget callbacks, the page or fragment run, any
`st.rerun()` it asks for): for each click, the runs that started between the click and the
paint, added up, as wall time and as the CPU time of the script's thread (the wall time less
any wait for a core another process held).
Controls that toggle (Next and Back, Append and Undo, Play and Pause) are pressed in turn, so the
page stays in the same range of states for all the clicks.

Run: .venv/bin/python -m bench.click_to_paint [--clicks 15] [--only NAME] [--save]
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness.app import serve
from harness.chromium import launch, open_path, wait_settled
from harness.figures import Run
from harness.live_view import LIVE_VIEW
from bench.script_timer import RUNS_FILE_VARIABLE, read_runs
from components.guard import GUARD_KEY

# Clicks `button`, then resolves with the milliseconds until the state described above is
# painted. `want` is a JavaScript expression over `t` (the text of `where`, or the live view's
# counter) and `before` (that text before the click).
_CLICK_JS = """
async ({button, where, want, live, disables}) => {
  const app = document.querySelector('[data-testid=stApp]');
  const liveView = LIVE_VIEW;
  const text = () => live ? ((liveView() || {}).status || '')
                          : ((document.querySelector(where) || {}).innerText || '');
  const judge = new Function('t', 'before', 'return (' + want + ');');
  const before = text();
  let ran = false, finished = null;
  // A short run can start and end before the observer is called: the records' old values still
  // show it, where the attribute's current value alone would not.
  const watch = new MutationObserver((records) => {
    const wasRunning = records.some((r) => r.oldValue === 'running');
    if (app.dataset.testScriptState === 'running') { ran = true; finished = null; }
    else if ((ran || wasRunning) && finished === null) { ran = true; finished = performance.now(); }
  });
  watch.observe(app, {attributes: true, attributeOldValue: true,
                      attributeFilter: ['data-test-script-state']});
  // A button with help has an undisplayed copy beside it in Streamlit 1.67: press the shown one.
  const target = [...document.querySelectorAll(button)].find((b) => b.checkVisibility() && !b.disabled);
  if (!target) throw new Error('no ' + button);
  const started = performance.now();
  target.click();
  // A run of a few tens of milliseconds can start and finish within one of React's batched
  // renders: the attribute then never reads "running". New text in the watched element shows
  // that the run's output arrived; in the live view, whose counter moves by itself, only the
  // state the click asks for does (Play's "training…" cannot show before Play's run has started
  // the job, nor Pause's end of it before Pause's run has stopped it). Play's page run was
  // such a run: the benchmark waited out its 60 s with the model training.
  const delivered = () => live ? judge(text(), before) : text() !== before;
  // Play and Pause: the live view stops drawing "training…" the moment Pause is pressed, before
  // the server has heard of it; the answer is there once the page run has also greyed out the
  // button pressed (Pause when the run is still, Play while it trains).
  const pressedOff = () => !disables || [...document.querySelectorAll(button)].every(
      (b) => !b.checkVisibility() || b.disabled);
  const answered = () => (ran || delivered()) && app.dataset.testScriptState === 'notRunning'
      && !document.querySelector('[data-stale="true"]') && judge(text(), before) && pressedOff();
  await new Promise((resolve, reject) => {
    const look = () => {
      if (answered()) return resolve();
      if (performance.now() - started > 60000) return reject(new Error('no answer in 60 s: ' + text()));
      requestAnimationFrame(look);
    };
    look();
  });
  await new Promise((resolve) => requestAnimationFrame(resolve));
  watch.disconnect();
  return [performance.now() - started, (finished ?? performance.now()) - started];
}
""".replace("LIVE_VIEW", LIVE_VIEW)


@dataclass(frozen=True)
class Press:
    """One control and what the learner must see after pressing it."""

    button: str       # CSS selector of the button
    want: str         # JavaScript over t (the text watched) and before (it before the click)
    prepare: str = ""  # CSS selector clicked (and waited for) before the timed click, untimed
    disables: bool = False  # answered only once the page has greyed out the button pressed


@dataclass(frozen=True)
class Case:
    path: str
    size: tuple[int, int]
    presses: tuple[Press, ...]   # pressed in turn
    where: str = ""              # CSS selector of the text watched; "" = the live view's counter


def _key(name: str) -> str:
    return f".st-key-{name} button"


LEARNER, PRESENTER = (1400, 1000), (1280, 720)
_HOME_CHECK = "kc_home_device_mismatch"
# The autograd page's step buttons carry the program's digest in their key (ag_step_<digest>).
_AG_NEXT = '[class*="st-key-ag_step_"][class*="_next"] button'
_AG_BACK = '[class*="st-key-ag_step_"][class*="_back"] button'
_CHANGED = "t !== before"
_STEP_SHOWN = "/Step \\d+ of/.test(t) && t !== before"

CASES = {
    "home: Commit and reveal, then Try again": Case(
        "/", LEARNER, (
            Press(_key(f"{_HOME_CHECK}_commit"), "t.includes('computed it with this function')",
                  prepare=f".st-key-{_HOME_CHECK} [role=radiogroup] label"),
            Press(_key(f"{_HOME_CHECK}_again"), "!t.includes('computed it with this function')")),
        where=f".st-key-{_HOME_CHECK}"),
    "tensor inspector: Append step, then Undo last step": Case(
        "/tensor_inspector?shape=4,6", LEARNER,
        (Press(_key("ti_append"), _CHANGED), Press(_key("ti_undo"), _CHANGED)),
        where=".st-key-ti_facts"),
    "autograd graph: Next node, then Back": Case(
        "/autograd_graph", LEARNER,
        (Press(_AG_NEXT, _STEP_SHOWN), Press(_AG_BACK, _CHANGED)),
        where="[data-testid=stMain]"),
    "moons trainer: Step (one epoch)": Case(
        "/moons_trainer", LEARNER,
        (Press(_key("mt_step"), "t !== before && !t.includes('training')"),)),
    "moons trainer: Play, then Pause": Case(
        "/moons_trainer?epochs=500", LEARNER,
        (Press(_key("mt_play"), "t.includes('training')", disables=True),
         Press(_key("mt_pause"), "!t.includes('training')", disables=True))),
    "batch iterator: Next": Case(
        "/batch_iterator?n=200&batch=4&epochs=2", LEARNER,
        (Press(_key("bi_next"), _CHANGED),), where=".st-key-batch_iterator_main"),
    "batch iterator: Next, presenter at 1280x720": Case(
        "/batch_iterator?n=200&batch=4&epochs=2&present=1", PRESENTER,
        (Press(_key("bi_next"), _CHANGED),), where=".st-key-bi_stage_indices"),
    # The sections below the batch view are lazy tabs: a tab reruns the page to draw its section.
    "batch iterator: the Pitfalls tab, then Epoch by epoch": Case(
        "/batch_iterator?n=200&batch=4&epochs=2", LEARNER,
        (Press(".st-key-bi_tabs [role=tab]:nth-child(2)", "t.includes('Workers that draw')"),
         Press(".st-key-bi_tabs [role=tab]:nth-child(1)", "t.includes('Classes in each batch')")),
        where=".st-key-bi_tabs"),
    "lessons: Next step, then Back": Case(
        "/lessons", LEARNER,
        (Press(_key("lesson_next"), _STEP_SHOWN), Press(_key("lesson_back"), _STEP_SHOWN)),
        where="[data-testid=stMain]"),
}


@dataclass(frozen=True)
class Click:
    """One click's times, in ms: until painted, until the run-over message was handled, and
    the server's script runs it started (wall and CPU time of their thread, added up)."""

    painted: float
    finished: float
    server_wall: float
    server_cpu: float


# How long the server's record of a run may follow the paint: the script thread writes it
# after the run-over message is sent (a generous bound on a busy machine; found at once).
RECORD_WAIT_S = 10


def _server_runs(runs_file: Path, since: float, until: float) -> list[dict]:
    """The runs the click started, waiting for the script thread to have written them."""
    deadline = time.monotonic() + RECORD_WAIT_S
    while not (runs := read_runs(runs_file, since, until)):
        if time.monotonic() > deadline:
            raise SystemExit(f"the server recorded no script run for a click in {runs_file}")
        time.sleep(0.02)
    return runs


def measure(page, case: Case, clicks: int, runs_file: Path) -> list[Click]:
    """Each click's times."""
    times = []
    for number in range(clicks):
        press = case.presses[number % len(case.presses)]
        if press.prepare:
            page.locator(press.prepare).first.click()
            wait_settled(page)
        # A click on a disabled button does nothing: wait until the control can be pressed (the
        # run a preparing click started may not have reached the browser yet). The copy pressed
        # is the shown one, as in _CLICK_JS: the undisplayed copy of a button with help could be
        # enabled while the shown Pause still waits for Play's rerun (a lost Pause, then "no
        # answer in 60 s" with the run still training).
        page.wait_for_function("(s) => [...document.querySelectorAll(s)]"
                               ".some((b) => b.checkVisibility() && !b.disabled)",
                               arg=press.button, timeout=60_000)
        clicked = time.monotonic()
        painted, finished = page.evaluate(_CLICK_JS, {"button": press.button, "where": case.where,
                                                      "want": press.want, "live": not case.where,
                                                      "disables": press.disables})
        runs = _server_runs(runs_file, clicked, time.monotonic())
        times.append(Click(painted, finished, sum(r["wall_ms"] for r in runs),
                           sum(r["cpu_ms"] for r in runs)))
        wait_settled(page)
        # A page that broke answers fast: a time measured on the guard's error panel is no figure.
        if page.locator(f".st-key-{GUARD_KEY}").count():
            raise SystemExit(f"{case.path}: the page guard caught an error; nothing measured")
    return times


def figure(clicks: list[Click]) -> str:
    """The median and the slowest of each time, in words."""
    def ms(values) -> str:
        return f"median {statistics.median(values):.0f} ms, slowest {max(values):.0f} ms"

    return (f"painted: {ms([c.painted for c in clicks])}; run-over message handled: median "
            f"{statistics.median(c.finished for c in clicks):.0f} ms; server's script runs: "
            f"{ms([c.server_wall for c in clicks])} (CPU time of their thread: "
            f"{ms([c.server_cpu for c in clicks])})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clicks", type=int, default=15)
    parser.add_argument("--only", default="", help="measure the cases whose name contains this")
    run = Run("click_to_paint", "Click to paint: each page's main control, answered in Chromium")
    args = parser.parse_args()
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    rows: list[tuple[str, str]] = []
    runs_file = Path(tempfile.mkdtemp(prefix="click_to_paint_")) / "script_runs.jsonl"
    os.environ[RUNS_FILE_VARIABLE] = str(runs_file)
    with serve(launcher="bench.script_timer") as base, sync_playwright() as p:
        browser = launch(p)
        for name, case in CASES.items():
            if args.only not in name:
                continue
            context = browser.new_context(viewport={"width": case.size[0], "height": case.size[1]})
            page = context.new_page()
            what = f"{name} ({case.size[0]}x{case.size[1]}), {args.clicks} clicks"
            try:
                open_path(page, base, case.path)
                measure(page, case, 2, runs_file)  # the first clicks load code the page had not used
                rows.append((what, figure(measure(page, case, args.clicks, runs_file))))
            except PlaywrightError as exc:
                # One control that never answered (a loaded machine) is a row that says so,
                # not a run that loses every other page's figures.
                rows.append((what, "not measured: " + str(exc).splitlines()[0]))
            print(*rows[-1], sep=": ", flush=True)
            context.close()
        browser.close()
    run.save(rows)


if __name__ == "__main__":
    main()
