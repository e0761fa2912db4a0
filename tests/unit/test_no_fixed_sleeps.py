"""End-to-end tests wait for content, never for a fixed time.

On a machine shared with others a fixed sleep is either too short (a flaky red) or too long (a
slow suite). So, in every file under tests/e2e:
- `wait_for_timeout(...)` is never called;
- `sleep(...)` (time.sleep, asyncio.sleep, a bare `sleep`) is called only inside a `while` loop
  that is bounded by a deadline (the loop mentions `deadline` or reads a clock), the shape of a
  poll for a server to come up or of tests/e2e/waiting.py's `assert_unchanged`.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
E2E = ROOT / "tests" / "e2e"
CLOCKS = {"monotonic", "perf_counter", "time"}


def _called(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _has_deadline(loop: ast.While) -> bool:
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and "deadline" in node.id.lower():
            return True
        if isinstance(node, ast.Attribute) and "deadline" in node.attr.lower():
            return True
        if isinstance(node, ast.Call) and _called(node) in CLOCKS:
            return True
    return False


def fixed_waits(source: str, filename: str = "<source>") -> list[str]:
    """'line: why' for each fixed wait in `source`."""
    tree = ast.parse(source, filename=filename)
    found: list[str] = []

    def visit(node: ast.AST, loops: tuple[ast.While, ...]) -> None:
        if isinstance(node, ast.Call):
            name = _called(node)
            if name == "wait_for_timeout":
                found.append(f"{node.lineno}: wait_for_timeout (wait with expect(...) for the content)")
            elif name == "sleep" and not (loops and _has_deadline(loops[-1])):
                found.append(f"{node.lineno}: sleep outside a deadline-bounded while loop")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            loops = ()                         # a loop around a definition does not bound its body
        inner = (*loops, node) if isinstance(node, ast.While) else loops
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, ())
    return found


def test_no_fixed_waits_in_the_end_to_end_tests():
    files = sorted(E2E.rglob("*.py"))
    assert files, E2E
    found = [f"{path.relative_to(ROOT).as_posix()}:{where}"
             for path in files
             for where in fixed_waits(path.read_text(encoding="utf-8"), str(path))]
    assert not found, "fixed waits in tests/e2e:\n" + "\n".join(found)


def test_the_check_sees_fixed_waits():
    source = (
        "import time\n"
        "from time import sleep\n"
        "def test(page):\n"
        "    page.wait_for_timeout(500)\n"          # 4
        "    time.sleep(1)\n"                       # 5
        "    sleep(1)\n"                            # 6
        "    for _ in range(3):\n"
        "        time.sleep(0.1)\n"                 # 8: a for loop is a fixed wait too
        "    while not page.ready():\n"
        "        time.sleep(0.1)\n"                 # 10: no deadline, may never end
    )
    assert [w.split(":")[0] for w in fixed_waits(source)] == ["4", "5", "6", "8", "10"]


def test_the_check_allows_polls_under_a_deadline():
    source = (
        "import time\n"
        "def wait(ready, timeout):\n"
        "    deadline = time.monotonic() + timeout\n"
        "    while time.monotonic() < deadline:\n"
        "        if ready():\n"
        "            return\n"
        "        time.sleep(0.1)\n"
        "    while True:\n"
        "        if time.monotonic() > deadline:\n"
        "            raise TimeoutError\n"
        "        time.sleep(0.1)\n"
    )
    assert fixed_waits(source) == []
