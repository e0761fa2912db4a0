"""Server time of one typical widget change per page, from the BackMsg to script_finished.

Each page is opened once as a fresh tab, then one typical interaction is repeated (a change and
its undo, alternately, so every rerun really changes something) and the median is printed. The
whole measurement runs against a server with Streamlit's default post-script garbage collection
and, to show what that costs, against one started with `--runner.postScriptGC false`.

Run: .venv/bin/python -m bench.rerun [--repeats 15] [--gc both|on|off] [--pages moons_trainer] [--save]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from collections.abc import Awaitable, Callable

from app_pages.navigation import HOME, LESSONS_PAGE
from harness.app import Server
from harness.figures import Run
from harness.st_client import RunResult, Session, number_state, string_state
from workbench.tools import AUTOGRAD_GRAPH, BATCH_ITERATOR, MOONS_TRAINER, TENSOR_INSPECTOR, TOOLS

Action = Callable[[Session, int], Awaitable[RunResult]]


def _choose(key: str) -> Action:
    """Pick the widget's second option, then its first again, and so on."""

    async def act(session: Session, i: int) -> RunResult:
        options = session.widget(key).options
        return await session.set_value(key, string_state(options[1 if i % 2 == 0 else 0]))

    return act


def _number(key: str, values: tuple[float, float]) -> Action:
    async def act(session: Session, i: int) -> RunResult:
        return await session.set_value(key, number_state(session, key, values[i % 2]))

    return act


def _step(forward: str, back: str) -> Action:
    """Click forward, then back: buttons that would be disabled at the end never are."""

    async def act(session: Session, i: int) -> RunResult:
        return await session.click(forward if i % 2 == 0 else back)

    return act


def _autograd_step(session: Session, i: int) -> Awaitable[RunResult]:
    # The stepper's keys carry a signature of the program: find them by their suffix.
    keys = [w.key for w in session.widgets.values() if w.kind == "button" and w.key]
    forward = next(k for k in keys if k.endswith("_next") and k.startswith("ag_"))
    back = forward.removesuffix("_next") + "_back"
    return session.click(forward if i % 2 == 0 else back)


W_SQUARED = (
    "code=w%20%3D%20torch.tensor(3.0%2C%20requires_grad%3DTrue)%0AL%20%3D%20w%20**%202%0A&backward=3&retain=1"
)
CASES: dict[str, tuple[str, str, Action]] = {
    # page: (query, what is changed, the change)
    HOME.url_path: ("", "knowledge-check answer (radio)", _choose("kc_home_device_mismatch_choice")),
    TENSOR_INSPECTOR.url_path: ("shape=2,3,4", "dtype selectbox", _choose("ti_dtype")),
    AUTOGRAD_GRAPH.url_path: (W_SQUARED, "Next node / back button", _autograd_step),
    MOONS_TRAINER.url_path: ("", "learning rate number_input", _number("mt_lr", (0.01, 0.003))),
    BATCH_ITERATOR.url_path: ("n=20&batch=6", "Next / Back batch button", _step("bi_next", "bi_prev")),
    LESSONS_PAGE.url_path: ("lesson=tensors", "Next / Back step button", _step("lesson_next", "lesson_back")),
}
# Every page but the class has its typical change (the class page needs a class to change).
assert {tool.url_path for tool in TOOLS} <= set(CASES), "a tool without a case in bench/rerun.py"


async def measure(url: str, page: str, repeats: int) -> tuple[list[float], list[str]]:
    query, _, action = CASES[page]
    problems: list[str] = []
    async with Session(url, page, query) as session:
        opened = await session.open()
        if not opened.finished:
            return [], [f"open: {opened.error or opened.status}"]
        await action(session, 0)  # warm-up: first-use imports and caches
        await action(session, 1)
        times = []
        for i in range(repeats):
            result = await action(session, i)
            times.append(result.wall_s)
            if not result.finished or result.guard_panel or result.exceptions:
                problems.append(
                    f"run {i}: finished={result.finished} guard={result.guard_panel} "
                    f"exceptions={result.exceptions} error={result.error}"
                )
    return times, problems


async def run_all(url: str, pages: list[str], repeats: int) -> dict[str, tuple[list[float], list[str]]]:
    return {page: await measure(url, page, repeats) for page in pages}


def main() -> None:
    run = Run("rerun", "Server time of one typical widget change per page")
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--gc", choices=("both", "on", "off"), default="both", help="runner.postScriptGC")
    parser.add_argument("--pages", default="home," + ",".join(p for p in CASES if p))
    parser.add_argument("--url", help="a running server instead (its own GC setting applies)")
    args = parser.parse_args()
    pages = [("" if p in {"", "/", "home"} else p.strip("/")) for p in args.pages.split(",")]

    settings = {"on": ["--runner.postScriptGC", "true"], "off": ["--runner.postScriptGC", "false"]}
    chosen = ["on", "off"] if args.gc == "both" else [args.gc]
    results: dict[str, dict[str, tuple[list[float], list[str]]]] = {}
    if args.url:
        results["url"] = asyncio.run(run_all(args.url, pages, args.repeats))
    else:
        for gc in chosen:
            with Server(extra_args=settings[gc], log_path=f"/tmp/rerun_server_gc_{gc}.log") as server:
                results[gc] = asyncio.run(run_all(server.url, pages, args.repeats))

    columns = list(results)
    print(f"== rerun: server time of one widget change, median of {args.repeats} (min-max), seconds")
    header = "".join(f"  {'postScriptGC ' + c if c != 'url' else 'server':>26}" for c in columns)
    print(f"{'page':<18}{'change':<34}{header}")
    for page in pages:
        cells = ""
        for column in columns:
            times, _ = results[column][page]
            cells += (
                f"  {statistics.median(times):>8.3f} ({min(times):.3f}-{max(times):.3f})   "
                if times
                else f"  {'failed':>26}"
            )
        print(f"{'/' + page:<18}{CASES[page][1]:<34}{cells}")
    if "on" in results and "off" in results:
        for page in pages:
            on, off = results["on"][page][0], results["off"][page][0]
            if on and off:
                cost = statistics.median(on) - statistics.median(off)
                print(f"  GC cost on /{page}: {1000 * cost:+.0f} ms per rerun")
    for column, by_page in results.items():
        for page, (_, problems) in by_page.items():
            for problem in problems:
                print(f"  PROBLEM ({column}) /{page}: {problem}")
    run.title += f" (BackMsg to `script_finished`, median (min-max) of {args.repeats})"
    run.save(rerun_rows(pages, results))


def rerun_rows(pages: list[str], results: dict[str, dict[str, tuple[list[float], list[str]]]]
               ) -> list[tuple[str, str]]:
    """A row per page: the median (min-max) of each server's times, and any problems."""
    rows = []
    for page in pages:
        cells = []
        for column, by_page in results.items():
            times, problems = by_page[page]
            server = "a running server" if column == "url" else f"postScriptGC {column}"
            cells.append(f"{server}: " + (
                f"{1000 * statistics.median(times):.0f} ms ({1000 * min(times):.0f}-{1000 * max(times):.0f})"
                if times else "failed") + (f", {len(problems)} problems" if problems else ""))
        rows.append((f"`/{page}`: {CASES[page][1]}", "; ".join(cells)))
    return rows


if __name__ == "__main__":
    main()
