"""Fuzz every page's lesson-link query parameters over the websocket, as fresh browser tabs.

For each page, sends seeded random query strings (documented parameters with valid, boundary,
out-of-range, wrong-type, huge, negative, -0, NaN/inf, empty, repeated, unicode and
Markdown/HTML values; unknown parameters; hide= and present=) and reports unfinished runs,
Streamlit exceptions, the page guard's error panel, the slowest run and the server's memory.

Run: .venv/bin/python -m bench.fuzz [--per-page 1000] [--seed 0] [--pages tensor_inspector,lessons]
     [--budget 1800] [--concurrency 2] [--url http://127.0.0.1:8501]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import random
import sys
import time
from dataclasses import dataclass, field
from typing import TextIO
from urllib.parse import quote


from harness.st_client import RunResult, Session, mib, rss_bytes
from harness.app import Server

from workbench.common.links import (
    BoolParam,
    ChoiceParam,
    ChoiceSetParam,
    FloatParam,
    IntListParam,
    IntParam,
    Param,
    PointsParam,
    TextParam,
)
from workbench.common.readme import TABLES
from workbench.tensor_inspector.settings import ShapeParam

# Quick pages first: a page that finishes early leaves its share of --budget to the later ones.
PAGES = ("", "lessons", "autograd_graph", "tensor_inspector", "batch_iterator", "moons_trainer")
BOOL = ("1", "0", "true", "false")

# Documented parameters per page: name -> (kind, choices or (lo, hi)).
Spec = tuple[str, tuple[object, ...]]
# Free text gets a generator of its own kind; everything else is fuzzed from its table entry.
TEXT_KINDS = {"ops": "ops", "code": "code"}


def spec_of(param: Param) -> Spec:
    """How to fuzz one link parameter, read from its settings table entry (written once)."""
    if isinstance(param, ShapeParam):
        return ("shape", (param.max_len, param.hi))
    if isinstance(param, IntListParam):
        return ("hidden", ())
    if isinstance(param, BoolParam):
        return ("bool", ())
    if isinstance(param, ChoiceParam):
        return ("choice", param.choices)
    if isinstance(param, ChoiceSetParam):
        return ("choices", param.choices)
    if isinstance(param, IntParam):
        return ("int", (param.lo, param.hi))
    if isinstance(param, FloatParam):
        return ("float", (param.lo, param.hi))
    if isinstance(param, PointsParam):
        return ("points", (param.bound, param.max_points))
    if isinstance(param, TextParam):
        return (TEXT_KINDS.get(param.name, "nasty"), ())
    raise TypeError(f"no fuzzing for {type(param).__name__} {param.name!r}")


# Every page's documented parameters, from the tools' settings tables (the home page has none).
SCHEMAS: dict[str, dict[str, Spec]] = {"": {}} | {
    page: {param.name: spec_of(param) for param in importlib.import_module(module).TABLE.params}
    for page, module in TABLES.items()
}

NASTY = (
    "",
    " ",
    "-0",
    "+0",
    "0",
    "-1",
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "Infinity",
    "1e309",
    "-1e309",
    "1e-320",
    "9" * 40,
    "-" + "9" * 40,
    "9" * 400,
    "0x10",
    "0b1",
    "1_000",
    "1e3",
    ".5",
    "5.",
    "1/2",
    "1,2",
    "true",
    "None",
    "null",
    "[]",
    "{}",
    "abc",
    "٣",
    "４２",
    "①",
    "ß",
    "İ",
    "😀",
    "\u202eevil",
    "a\u0000b",
    "\t1\n",
    "%",
    "%%",
    "&",
    "=",
    "?",
    "#x",
    "+",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "**bold** _it_",
    "[x](javascript:alert(1))",
    "$$\\frac{1}{0}$$",
    "`code`",
    "```\nblock\n```",
    ":material/error:",
    "{capacity}",
    "%s%s%n",
    "\\",
    "'",
    '"',
    "x" * 5000,
    "../../etc/passwd",
)
OP_NAMES = (
    "view",
    "reshape",
    "transpose",
    "t",
    "permute",
    "movedim",
    "unsqueeze",
    "squeeze",
    "flatten",
    "unflatten",
    "contiguous",
    "expand",
    "narrow",
    "select",
    "flip",
    "clone",
)
PROGRAMS = (
    "w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2",
    "x = torch.tensor(2.0, requires_grad=True)\ny = x**2 + 3*x + 1",
    "x = torch.tensor(2.0)\nw = torch.tensor(3.0, requires_grad=True)\n"
    "b = torch.tensor(1.0, requires_grad=True)"
    "\ny = w * x + b\nL = (y - 10) ** 2",
    "w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2\nL.backward()\nwith torch.no_grad():\n"
    "    w -= 0.1 * w.grad\nw.grad.zero_()",
    "x = torch.ones(100, 100, requires_grad=True)\ny = (x @ x).sum()",
    "w = torch.tensor(1.0, requires_grad=True)\nfor i in range(100):\n"
    "    for j in range(100):\n        w = w * 1.0",
    "w = torch.tensor(1.0, requires_grad=True)\nL = w / 0",
    "w = torch.tensor(1.0, requires_grad=True)\nL = w ** 1e9",
    "w = torch.randn(10000, requires_grad=True)\nL = (w * w).sum()",
    "w = torch.tensor([], requires_grad=True)\nL = w.sum()",
    "w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2\nL.backward()\nL.backward()",
    "L = model(X).sum()",
    "y = model(X)\nL = ((y - y) ** 2).mean()",
    "import os",
    "().__class__.__bases__[0].__subclasses__()",
    "w = torch.tensor(3.0)\nw.__class__",
    "lambda: 0",
    "[i for i in range(10)]",
    "while True:\n    pass",
    "if 1:\n    x = 1",
    "x = torch.zeros(1000000000)",
    "x = torch.ones(3, requires_grad=True)\ny = x.view(1, 3).expand(100, 3)\nL = y.sum()",
    "x = torch.tensor(2.0, requires_grad=True)\ny = x.detach() * x\nL = y",
    "with torch.no_grad():\n    x = torch.tensor(2.0, requires_grad=True) * 2\nL = x",
    "x = torch.tensor(2.0, requires_grad=True)\nx.backward()",
    "print(torch.__version__)",
    "x = torch.tensor(2.0, requires_grad=True)\nprint(x)\nprint(x * 2)",
    "x = 1\n" * 90,
    "(" * 200 + ")" * 200,
    "x = torch.tensor(1.0, requires_grad=True)\n" + "x = x * 1.0\n" * 79,
    "ẋ = torch.tensor(1.0, requires_grad=True)\nL = ẋ * 2",
    "x =",
    "\n\n\n",
    "x = torch.tensor(float('nan'))",
    "x = torch.tensor(2.0, requires_grad=True)\ny = torch.sin(x) * torch.exp(x)\n"
    "z = y.log()\nL = z + x.relu()",
)


def _number(rng: random.Random, lo: float, hi: float, integer: bool) -> str:
    pick = rng.random()
    if pick < 0.35:
        value: float = rng.randint(int(lo), int(hi)) if integer else rng.uniform(lo, hi)
    elif pick < 0.6:
        step = 1 if integer else max((hi - lo) * 1e-6, 1e-12)
        value = rng.choice((lo, hi, lo - step, hi + step, lo + step, hi - step))
    elif pick < 0.75:
        value = rng.choice((-1, -hi, hi * 10, hi * 1000, 2**31, 2**63, 2**64, -(2**63) - 1, 10**30))
    else:
        return rng.choice(NASTY)
    if integer and rng.random() < 0.85:
        return str(int(value))
    return rng.choice((repr(float(value)), f"{value:g}", f"{value:.3e}"))


def _shape(rng: random.Random, max_rank: int, max_size: int) -> str:
    pick = rng.random()
    if pick < 0.4:
        rank = rng.randint(0, max_rank)
        return ",".join(str(rng.choice((0, 1, 2, 3, 4, 6, 7, 16, 64))) for _ in range(rank))
    if pick < 0.65:
        rank = rng.randint(0, max_rank + 2)
        sizes = [
            rng.choice((0, 1, max_size, max_size + 1, -1, -0, 2**31, 10**18, 512, 4096)) for _ in range(rank)
        ]
        return ",".join(str(s) for s in sizes)
    if pick < 0.8:
        return rng.choice(
            (
                "4,,6",
                ",",
                "4, 6",
                " 4 , 6 ",
                "4;6",
                "(4,6)",
                "[4,6]",
                "4x6",
                "4.0,6",
                "4,6,",
                ",4",
                "1e3,2",
                "-0,4",
                "4,nan",
                "inf",
                "１,２",
                "4,6" * 200,
                "2," * 30 + "2",
            )
        )
    return rng.choice(NASTY)


def _ops(rng: random.Random) -> str:
    if rng.random() < 0.15:
        return rng.choice(
            NASTY
            + (
                "__class__",
                "view(*x)",
                "view(1e400)",
                "(((((",
                "t()" * 200,
                "view(-1).__class__",
                "t().t().t()",
                "[::-1]",
                "[None]",
                "[..., 0]",
                "[1:2, ::2]",
                "view(x=1)",
                "reshape(-1, -1)",
            )
        )
    parts = []
    for _ in range(rng.randint(1, 6)):
        name = rng.choice(OP_NAMES + ("[]",))
        args = [
            str(rng.choice((-3, -2, -1, 0, 1, 2, 3, 4, 6, 24, 10**9, 2**63)))
            for _ in range(rng.randint(0, 4))
        ]
        if name == "[]":
            parts.append(
                "["
                + ", ".join(
                    rng.choice(("0", ":", "::2", "1:", "None", "...", "-1", "::-1", "99"))
                    for _ in range(rng.randint(1, 3))
                )
                + "]"
            )
        elif name == "unflatten":
            parts.append(
                f".unflatten({rng.choice(args or ['0'])}, ({rng.choice(('2, -1', '-1, -1', '0', '3, 8'))}))"
            )
        else:
            parts.append(f".{name}({', '.join(args)})")
    return "".join(parts).lstrip(".")


def _code(rng: random.Random) -> str:
    if rng.random() < 0.1:
        return rng.choice(NASTY)
    program = rng.choice(PROGRAMS)
    if rng.random() < 0.3:
        program += "\n" + rng.choice(PROGRAMS)
    if rng.random() < 0.1:
        program = program.replace("\n", rng.choice(("\r\n", "\r", "\n\n", ";")))
    return program


def _hidden(rng: random.Random) -> str:
    if rng.random() < 0.6:
        return ",".join(str(rng.choice((1, 2, 8, 16, 32, 64, 128, 256))) for _ in range(rng.randint(0, 4)))
    return rng.choice(
        ("", "0", "257", "64,32,16,8,4", "-1", "64,,32", "1e2", "64;32", "256," * 100, "64, 32", "nan", "١٢")
        + NASTY
    )


def value_for(rng: random.Random, spec: Spec) -> str:
    kind, args = spec
    if rng.random() < 0.12:
        return rng.choice(NASTY)
    if kind == "choice":
        choice = str(rng.choice(args))
        return rng.choice(
            (choice, choice, choice, choice.upper(), choice.lower(), f" {choice} ", choice + "x")
        )
    if kind == "choices":
        picked = [str(rng.choice(args)) for _ in range(rng.randint(0, len(args) + 1))]
        picked = [rng.choice((c, c.upper(), f" {c} ", c + "x")) for c in picked]
        return ",".join(picked)
    if kind == "bool":
        return rng.choice(BOOL + ("2", "-1", "yes", "TRUE", "on", ""))
    if kind in {"int", "float"}:
        lo, hi = args
        return _number(rng, float(lo), float(hi), kind == "int")  # type: ignore[arg-type]
    if kind == "shape":
        max_rank, max_size = args
        return _shape(rng, int(max_rank), int(max_size))  # type: ignore[call-overload]
    if kind == "ops":
        return _ops(rng)
    if kind == "code":
        return _code(rng)
    if kind == "hidden":
        return _hidden(rng)
    if kind == "points":
        bound, most = args
        return _points(rng, float(bound), int(most))  # type: ignore[call-overload]
    return rng.choice(NASTY)


def _points(rng: random.Random, bound: float, most: int) -> str:
    """Drawn points (the moons trainer's `points=`): on and off the plane, few and many (up to
    past the cap), classes unknown or repeated, pieces missing."""
    def number() -> str:
        if rng.random() < 0.97:
            return f"{rng.uniform(-bound, bound):.2f}"
        return rng.choice((f"{rng.uniform(-2 * bound, 2 * bound):g}", "", "nan", "-0", "1e9", "x"))
    groups = []
    for _ in range(rng.randint(0, 3)):
        count = rng.choice((0, 1, 5, 12, 60, most // 2 + 1))
        points = "_".join(f"{number()},{number()}" for _ in range(count))
        groups.append(f"{rng.choice(('0', '1', '1', '0', '2', ''))}:{points}")
    return "~".join(groups)


def make_query(rng: random.Random, page: str) -> str:
    schema = SCHEMAS[page]
    names = list(schema)
    pairs: list[tuple[str, str]] = []
    if names:
        for name in rng.sample(names, rng.randint(1, min(len(names), 6))):
            pairs.append((name, value_for(rng, schema[name])))
            if rng.random() < 0.08:  # a repeated key: the last one wins in st.query_params
                pairs.append((name, value_for(rng, schema[name])))
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
                rng.choice(NASTY),
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
