"""Fuzz every page's lesson-link query parameters over the websocket, as fresh browser tabs.

For each page, sends seeded random query strings (documented parameters with valid, boundary,
out-of-range, wrong-type, huge, negative, -0, NaN/inf, empty, repeated, unicode and
Markdown/HTML values; unknown parameters; hide= and present=) and reports unfinished runs,
Streamlit exceptions, the page guard's error panel, the slowest run and the server's memory.

Each parameter's values are its own (`Param.example`, workbench/common/links.py), the same that
tests/app/test_fuzz_links.py draws from; the pages are home, the lessons and every tool's record
(workbench/tools.py).

Run: .venv/bin/python -m bench.fuzz [--per-page 1000] [--seed 0] [--pages tensor_inspector,lessons]
     [--budget 1800] [--concurrency 2] [--url http://127.0.0.1:8501]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
import time
from dataclasses import dataclass, field
from typing import TextIO
from urllib.parse import quote

from app_pages.navigation import HOME, LESSONS_PAGE
from harness.app import Server
from harness.st_client import RunResult, Session, mib, rss_bytes
from workbench.common.hostile_text import HOSTILE
from workbench.common.links import Param
from workbench.lessons.settings import TABLE as LESSONS_TABLE
from workbench.tools import TOOLS

# Every page and the parameters its links carry, by URL path: home (none) and the lessons, which
# are quick and go first (a page that finishes early leaves its share of --budget to the later
# ones), then every tool with all the tables its page reads (the moons trainer's `vs=` too). Each
# parameter writes its own values (`Param.example`, shared with tests/app/test_fuzz_links.py).
PAGES: dict[str, dict[str, Param]] = {
    HOME.url_path: {},
    LESSONS_PAGE.url_path: {p.name: p for p in LESSONS_TABLE.params},
    **{tool.url_path: {p.name: p for table in tool.link_tables.values() for p in table.params}
       for tool in TOOLS},
}
BOOL = ("1", "0", "true", "false")


def make_query(rng: random.Random, page: str) -> str:
    params = PAGES[page]
    names = list(params)
    pairs: list[tuple[str, str]] = []
    if names:
        for name in rng.sample(names, rng.randint(1, min(len(names), 6))):
            pairs.append((name, params[name].example(rng)))
            if rng.random() < 0.08:  # a repeated key: the last one wins in st.query_params
                pairs.append((name, params[name].example(rng)))
    if rng.random() < 0.25:
        pairs.append(
            (
                "hide",
                rng.choice(
                    (
                        ",".join(rng.sample(names, min(len(names), rng.randint(1, 4)))) if names else "x",
                        "",
                        ",,,",
                        "SHAPE",
                        "all",
                        "a" * 40,
                        ",".join(["x"] * 200),
                        "hide",
                        "present",
                        "<b>x</b>",
                    )
                ),
            )
        )
    if rng.random() < 0.25:
        pairs.append(("present", rng.choice(BOOL + ("2", "", "yes", "-0", "nan"))))
    if rng.random() < 0.15:
        pairs.append(
            (
                rng.choice(
                    (
                        "unknown",
                        "page",
                        "embed",
                        "embed_options",
                        "x",
                        "",
                        "_stcore",
                        "😀",
                        "shape[]",
                        "lesson",
                    )
                ),
                rng.choice(HOSTILE),
            )
        )
    rng.shuffle(pairs)
    query = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in pairs)
    if rng.random() < 0.03:  # malformed percent-encoding and separators, as a hand-typed link
        query = rng.choice(
            ("%ZZ=1", "&&&", "=x", "shape", "a=%", query + "&", "&" + query, query.replace("=", "=="))
        )
    return query


@dataclass
class PageReport:
    runs: int = 0
    unfinished: list[tuple[str, str]] = field(default_factory=list)
    guard: list[tuple[str, str]] = field(default_factory=list)
    exceptions: list[tuple[str, str]] = field(default_factory=list)
    worst: tuple[float, str] = (0.0, "")
    times: list[float] = field(default_factory=list)
    suspects: list[str] = field(default_factory=list)  # in flight when the server blew up or died
    culprits: list[tuple[str, str]] = field(default_factory=list)  # confirmed alone: (query, what happened)


@dataclass
class Blowup:
    page: str
    reason: str
    suspects: list[str]


class ServerKeeper:
    """The fuzzed server: started, watched, and restarted when it dies or its memory passes the limit.

    A script keeps running on the server after its tab timed out and closed, so queries that timed
    out in the last minute are suspects too, not only those in flight.
    """

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.limit = int(args.max_rss_gib * 2**30)
        self.server: Server | None = None
        self.url = args.url.rstrip("/") if args.url else ""
        self.pid: int = args.pid
        self.generation = 0
        self.ready = asyncio.Event()
        self.inflight: dict[int, tuple[str, str]] = {}
        self.lingering: list[tuple[float, str, str]] = []
        self.blowups: list[Blowup] = []
        self.peak = 0
        self.window_peak = 0
        self.restarts = 0
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if not self.args.url:
            self.server = await asyncio.to_thread(
                Server(extra_args=self.args.server_arg, log_path=self.args.server_log).start
            )
            self.url, self.pid = self.server.url, self.server.pid
        self.ready.set()
        self._task = asyncio.create_task(self._watch())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.server is not None:
            await asyncio.to_thread(self.server.stop)

    def rss(self) -> int:
        return rss_bytes(self.pid) if self.pid else 0

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(0.25)
            if not self.ready.is_set() or self.server is None:
                continue
            rss = await asyncio.to_thread(self.rss)
            self.peak = max(self.peak, rss)
            self.window_peak = max(self.window_peak, rss)
            dead = self.server.process is None or self.server.process.poll() is not None
            if rss > self.limit or dead:
                reason = "server died" if dead else f"server memory {mib(rss)} passed {mib(self.limit)}"
                await self.restart(reason)

    async def restart(self, reason: str) -> None:
        self.ready.clear()
        now = time.monotonic()
        suspects = [(page, query) for page, query in self.inflight.values()]
        suspects += [(page, query) for when, page, query in self.lingering if now - when < 60]
        page = suspects[0][0] if suspects else "?"
        self.blowups.append(Blowup(page, reason, list(dict.fromkeys(q for _, q in suspects))))
        print(f"  !! {reason}; {len(suspects)} suspect queries; restarting the server", flush=True)
        self.lingering.clear()
        assert self.server is not None
        await asyncio.to_thread(self.server.stop)
        self.server = await asyncio.to_thread(
            Server(extra_args=self.args.server_arg, log_path=self.args.server_log).start
        )
        self.url, self.pid = self.server.url, self.server.pid
        self.generation += 1
        self.restarts += 1
        self.ready.set()


async def run_one(keeper: ServerKeeper, page: str, query: str, run_timeout: float) -> RunResult:
    try:
        async with Session(keeper.url, page, query, run_timeout=run_timeout) as session:
            return await session.open()
    except Exception as exc:  # noqa: BLE001 - a failed connect is a finding, not a crash
        return RunResult(error=f"{type(exc).__name__}: {exc}")


async def fuzz_page(
    keeper: ServerKeeper,
    page: str,
    queries: list[str],
    report: PageReport,
    *,
    deadline: float,
    concurrency: int,
    run_timeout: float,
    log: TextIO,
) -> None:
    pending = list(reversed(queries))

    async def worker(number: int) -> None:
        while pending and time.monotonic() < deadline:
            await keeper.ready.wait()
            query = pending.pop()
            generation = keeper.generation
            keeper.inflight[number] = (page, query)
            result = await run_one(keeper, page, query, run_timeout)
            keeper.inflight.pop(number, None)
            if keeper.generation != generation or not keeper.ready.is_set():
                report.suspects.append(query)  # the server went down under it: checked alone later
                continue
            report.runs += 1
            report.times.append(result.wall_s)
            if result.wall_s > report.worst[0]:
                report.worst = (result.wall_s, query)
            if not result.finished:
                report.unfinished.append((query, result.error or f"status {result.status}"))
                keeper.lingering.append((time.monotonic(), page, query))
            if result.guard_panel:
                report.guard.append((query, result.guard_text))
                print(f"/{page}\t?{query}\t{result.guard_text}", file=log, flush=True)
            for exception in result.exceptions:
                report.exceptions.append((query, exception))
            if result.compile_error:
                report.exceptions.append((query, result.compile_error))

    await asyncio.gather(*(worker(n) for n in range(concurrency)))


async def isolate(
    keeper: ServerKeeper, page: str, queries: list[str], report: PageReport, args: argparse.Namespace
) -> None:
    """Run each suspect alone on a healthy server: which of them really kills it or blows its memory?"""
    for query in dict.fromkeys(queries):
        await keeper.ready.wait()
        await asyncio.sleep(2)
        generation = keeper.generation
        before = keeper.rss()
        keeper.window_peak = before
        keeper.inflight[-1] = (page, query)
        result = await run_one(keeper, page, query, args.run_timeout)
        keeper.inflight.pop(-1, None)
        settle_until = time.monotonic() + args.linger  # the script may still be running
        while time.monotonic() < settle_until and keeper.generation == generation:
            await asyncio.sleep(0.25)
        rose = f"rss {mib(before)} -> peak {mib(keeper.window_peak)}, run {result.wall_s:.1f}s"
        if keeper.generation != generation:
            report.culprits.append((query, f"{keeper.blowups[-1].reason} ({rose})"))
            keeper.blowups.pop()  # already listed as this culprit
        elif not result.finished:
            report.culprits.append((query, f"unfinished alone: {result.error} ({rose})"))
        if report.culprits and report.culprits[-1][0] == query:
            keeper.blowups = [b for b in keeper.blowups if query not in b.suspects]  # explained
        else:
            print(f"  suspect cleared alone: ?{show(query, 120)} ({rose})", flush=True)


def show(text: str, limit: int = 300) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


async def main_async(args: argparse.Namespace) -> int:
    pages = [("" if p in {"", "/", "home"} else p.strip("/")) for p in args.pages.split(",")]
    rng = random.Random(args.seed)
    plans = {page: [make_query(rng, page) for _ in range(args.per_page)] for page in PAGES}
    start, _, stop = args.slice.partition(":")
    plans = {page: plans[page][int(start or 0) : int(stop) if stop else None] for page in pages}
    if args.query:  # given queries instead of generated ones, e.g. to re-check a finding
        plans = {page: [q.lstrip("?") for q in args.query] for page in pages}
    keeper = ServerKeeper(args)
    await keeper.start()
    reports: dict[str, PageReport] = {}
    try:
        before = keeper.rss()
        started = time.monotonic()
        with open(args.guard_file, "w", encoding="utf-8") as log:
            for index, page in enumerate(pages):
                remaining = args.budget - (time.monotonic() - started)
                deadline = time.monotonic() + remaining / (len(pages) - index)
                reports[page] = report = PageReport()
                first_blowup = len(keeper.blowups)
                await fuzz_page(
                    keeper,
                    page,
                    plans[page],
                    report,
                    deadline=deadline,
                    concurrency=args.concurrency,
                    run_timeout=args.run_timeout,
                    log=log,
                )
                suspects = report.suspects + [q for b in keeper.blowups[first_blowup:] for q in b.suspects]
                if suspects and keeper.server is not None:
                    await isolate(keeper, page, suspects, report, args)
                print(
                    f"/{page}: {report.runs} runs, {len(report.guard)} guard panels, "
                    f"{len(report.exceptions)} exceptions, {len(report.unfinished)} unfinished, "
                    f"{len(report.culprits)} server killers ({time.monotonic() - started:.0f}s)",
                    flush=True,
                )
        await asyncio.sleep(args.settle)
        after = keeper.rss()
        elapsed = time.monotonic() - started
    finally:
        await keeper.stop()

    print(
        f"\n== fuzz: seed {args.seed}, {args.per_page} planned per page, {elapsed:.0f}s, "
        f"concurrency {args.concurrency}, server restarts {keeper.restarts}"
    )
    total_guard = total_exc = total_unfinished = total_culprits = 0
    for page, report in reports.items():
        times = sorted(report.times)
        median = times[len(times) // 2] if times else 0.0
        print(
            f"\n/{page}: runs {report.runs}/{len(plans[page])}, unfinished {len(report.unfinished)}, "
            f"guard panels {len(report.guard)}, exceptions {len(report.exceptions)}, "
            f"server killers {len(report.culprits)}, "
            f"median {median:.2f}s, worst {report.worst[0]:.2f}s for ?{show(report.worst[1], 200)}"
        )
        for query, why in report.culprits:
            print(f"  SERVER KILLER ?{show(query, 600)}  -> {why}")
        for query, why in report.unfinished:
            print(f"  UNFINISHED ?{show(query)}  -> {why}")
        for query, text in report.guard:
            print(f"  GUARD ?{show(query)}  -> {show(text, 200)}")
        for query, text in report.exceptions:
            print(f"  EXCEPTION ?{show(query)}  -> {show(text, 200)}")
        total_guard += len(report.guard)
        total_exc += len(report.exceptions)
        total_unfinished += len(report.unfinished)
        total_culprits += len(report.culprits)
    for blowup in keeper.blowups:  # blow-ups no suspect reproduced alone
        print(
            f"  UNEXPLAINED {blowup.reason} on /{blowup.page}; "
            f"in flight: {[show(q, 120) for q in blowup.suspects]}"
        )
    print(
        f"\ntotal: runs {sum(r.runs for r in reports.values())}, unfinished {total_unfinished}, "
        f"guard panels {total_guard} (listed in {args.guard_file}), exceptions {total_exc}, "
        f"server killers {total_culprits}"
    )
    if keeper.pid:
        print(
            f"server memory (with children): before {mib(before)}, peak {mib(keeper.peak)} "
            f"(limit {mib(keeper.limit)}), after {mib(after)} ({args.settle:.0f}s after the last run)"
        )
    return 1 if total_guard or total_exc or total_unfinished or total_culprits else 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--per-page", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--pages",
        default=",".join(p or "home" for p in PAGES),
        help="comma-separated url paths; home or / for the default page",
    )
    parser.add_argument("--budget", type=float, default=3600, help="total seconds, split across pages")
    parser.add_argument("--concurrency", type=int, default=2, help="tabs open at once")
    parser.add_argument("--run-timeout", type=float, default=30, help="seconds to wait for script_finished")
    parser.add_argument(
        "--slice",
        default=":",
        help="run only these of each page's planned queries, e.g. 0:20 (plans do not depend on --pages)",
    )
    parser.add_argument(
        "--query", action="append", default=[], help="run this query string instead (repeatable)"
    )
    parser.add_argument("--url", help="a running server instead of starting one")
    parser.add_argument("--pid", type=int, default=0, help="with --url: its pid, for memory")
    parser.add_argument("--server-arg", action="append", default=[], help="extra streamlit run argument")
    parser.add_argument("--server-log", default="/tmp/fuzz_server.log")
    parser.add_argument("--guard-file", default="/tmp/fuzz_guard_panels.txt")
    parser.add_argument("--settle", type=float, default=5, help="seconds before the last memory reading")
    parser.add_argument(
        "--max-rss-gib",
        type=float,
        default=6,
        help="kill and restart the server past this memory (with children)",
    )
    parser.add_argument(
        "--linger", type=float, default=15, help="seconds to watch the server after a suspect"
    )
    sys.exit(asyncio.run(main_async(parser.parse_args())))


if __name__ == "__main__":
    main()
