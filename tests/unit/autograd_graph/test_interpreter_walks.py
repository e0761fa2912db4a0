"""Walks of a learner's values stay within the page's limits, and print shows no heap address.

A program can share one list many times (`b = [a, a]`, `c = [b, b]`, ...): a dozen lines hold
millions of items, and anything that walks every appearance (counting a literal, checking a
call's operands, torch.tensor in C) runs for seconds, or hours, between two deadline checks.
The hostile programs run in a child process with a wall-clock limit and a capped address space,
so a regression fails here instead of hanging the suite. Besides the refusal and its message,
each case counts the lines of the interpreter the run executes (in every module of
workbench/autograd_graph/: interpreter.py puts a run together from budget.py, dry_run.py,
expressions.py and the others beside it, and language.py checks the program first): a structural
bound, not a time threshold a loaded machine could break.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.capped import address_space_cap

from workbench.autograd_graph.budget import measure
from workbench.autograd_graph.interpreter import DEFAULT_LIMITS, run_program

ROOT = Path(__file__).resolve().parents[3]
CHILD_BUDGET = 512 * 2**20           # address space the child may add after importing torch
CHILD_TIMEOUT_S = 60                 # all cases together; bounded, they take well under a second

LIMIT = DEFAULT_LIMITS.max_numel
# A walk takes at most 2 * LIMIT + 2 steps (each adds one to a count) of fewer than 30 lines; the
# rest of each program is a few hundred statements and expressions. Walking every appearance of
# the shared lists below instead executes more than 2**22 lines.
LINE_BUDGET = 30 * (2 * LIMIT + 2) + 100 * DEFAULT_LIMITS.max_nodes


def _doubling(name: str, first: str, times: int) -> list[str]:
    """`name0 = [first, first]`, `name1 = [name0, name0]`, ...: 2**(times + 1) appearances of
    `first` in `name{times - 1}`, in `times` distinct lists."""
    lines, previous = [], first
    for level in range(times):
        lines.append(f"{name}{level} = [{previous}, {previous}]")
        previous = f"{name}{level}"
    return lines


SHARED_8192 = ["one = 1", *_doubling("b", "one", 12)]             # b11 holds 8192 numbers
REFS_600 = ", ".join(["b11"] * 600)                               # 600 * 8192 > 2**22

CASES = {
    # The finding: counting this literal walked 600 * 8192 = 4.9 million leaves in one go.
    "a literal of shared lists": (
        "\n".join([*SHARED_8192, f"z = [{REFS_600}]"]),
        "a list may hold at most 10000 numbers"),
    # No numbers at all, so no count of numbers stops it; torch.tensor would walk 600 * 2**19
    # empty lists in C, past any deadline.
    "torch.tensor of shared empty lists": (
        "e = []\na = [e, e]\nfor i in range(17):\n    a = [a, a]\nt = torch.tensor(["
        + ", ".join(["a"] * 600) + "])",
        "lists inside it"),
    "empty lists doubled 40 times": (
        "a = []\nfor i in range(4):\n    for j in range(10):\n        a = [a, a]\nprint(a)",
        "lists inside it"),
    # Each list is within the limit; 600 of them passed to one call are not.
    "one call given 600 shared lists": (
        "\n".join([*SHARED_8192, "x = torch.ones(1)", f"y = x.view({REFS_600})"]),
        "one call may be given at most"),
}

CHILD = """
import json, sys, time
from pathlib import Path
import workbench.autograd_graph.interpreter as interpreter
{cap}
# The interpreter's modules: interpreter.py and the parts beside it that it runs a program with.
MODULES = {{str(path) for path in Path(interpreter.__file__).parent.glob("*.py")}}
assert interpreter.__file__ in MODULES and len(MODULES) > 10, MODULES

def lines_run(source):
    # Lines of the interpreter's modules executed by one run of `source`.
    count = 0
    def line(frame, event, arg):
        nonlocal count
        count += event == "line"
        return line
    def call(frame, event, arg):
        return line if frame.f_code.co_filename in MODULES else None
    sys.settrace(call)
    try:
        interpreter.run_program(source)
    finally:
        sys.settrace(None)
    return count

for name, source in json.loads(sys.argv[1]).items():
    started = time.monotonic()
    outcome = interpreter.run_program(source)
    seconds = time.monotonic() - started
    problem = outcome.refused or outcome.failed
    print(json.dumps({{"name": name, "seconds": seconds, "lines": lines_run(source),
                      "kind": getattr(problem, "kind", None), "message": str(problem)}}), flush=True)
"""


@pytest.fixture(scope="module")
def hostile_runs() -> dict[str, dict]:
    """Each case's outcome in a capped child; a case the child did not finish is missing."""
    source = textwrap.dedent(CHILD).format(cap=address_space_cap(CHILD_BUDGET))
    programs = json.dumps({name: program for name, (program, _) in CASES.items()})
    try:
        done = subprocess.run([sys.executable, "-c", source, programs], cwd=ROOT, text=True,
                              capture_output=True, timeout=CHILD_TIMEOUT_S,
                              env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})
        output, failure = done.stdout, (done.stderr[-3000:] if done.returncode else "")
    except subprocess.TimeoutExpired as timed_out:
        output = timed_out.stdout.decode() if isinstance(timed_out.stdout, bytes) else timed_out.stdout
        failure = f"the child ran past {CHILD_TIMEOUT_S} s"
    runs = {}
    for line in (output or "").splitlines():
        run = json.loads(line)
        runs[run["name"]] = run
    runs["failure"] = failure
    return runs


@pytest.mark.spawns
@pytest.mark.parametrize("name", CASES)
def test_hostile_shared_lists_end_at_a_limit_without_walking_every_appearance(hostile_runs, name):
    run = hostile_runs.get(name)
    assert run is not None, f"{name!r} did not finish: {hostile_runs['failure']}"
    assert run["kind"] == "limit", run["message"]
    assert CASES[name][1] in run["message"]
    assert run["lines"] <= LINE_BUDGET, f"{run['lines']:,} lines of the interpreter ran"
    # Generous: a bounded run takes milliseconds; the old walks took seconds to hours.
    assert run["seconds"] <= DEFAULT_LIMITS.max_seconds + 10


def test_a_shared_list_is_counted_once_per_distinct_list():
    level = [1, 1]
    for _ in range(60):                                  # 2**61 numbers, in 61 distinct lists
        level = [level, level]
    steps = []
    items, lists = measure(level, 2**70, lambda: steps.append(1))
    assert (items, lists) == (2**61, 2**61 - 2)
    assert len(steps) <= 4 * 61                          # linear in the distinct lists
    steps.clear()
    items, lists = measure(level, LIMIT, lambda: steps.append(1))
    assert items > LIMIT                                 # stopped as soon as it passed the limit
    assert len(steps) <= 4 * 61


def test_the_walk_checks_the_deadline_as_it_goes():
    class PastTheDeadline(Exception):
        pass

    checks = []

    def tick():
        checks.append(1)
        if len(checks) > 100:
            raise PastTheDeadline

    with pytest.raises(PastTheDeadline):
        measure([list(range(50))] * 100, LIMIT, tick)    # 5,000 numbers: checked within them


def test_print_shows_no_heap_address():
    outcome = run_program(
        "w = torch.ones(2, requires_grad=True)\ny = w * 2\nprint(y.grad_fn)\n"
        "print([y.grad_fn, y.sum().grad_fn], (w.exp().grad_fn,))\n"
        "z = y.clone()\nz.mul_(3)\nprint(z.grad_fn, thing)\nprint(w.grad_fn, w.dtype, w.shape)",
        bindings={"thing": object()})
    assert outcome.ok, outcome.refused or outcome.failed
    printed = [p.text for p in outcome.interpreter.printed]
    assert printed[:3] == ["<MulBackward0>", "[<MulBackward0>, <SumBackward0>] (<ExpBackward0>,)",
                           "<MulBackward0> <object>"]
    assert printed[3] == "None torch.float32 torch.Size([2])"
    assert not any("0x" in text for text in printed), printed


def test_print_writes_strings_inside_lists_as_python_does():
    outcome = run_program("print('a', ['a', ('b',)], 'at 0x10')")
    assert outcome.interpreter.printed[0].text == "a ['a', ('b',)] at 0x10"
