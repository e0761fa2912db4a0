"""bench/ and tests/ stand apart, both on harness/: what they share (starting the app, Chromium,
the protocol client, PostgreSQL, nginx, the hostile uploads, the saved figures) lives in
harness/, so that a benchmark runs from a checkout whatever shape tests/ takes, and no test
breaks because a benchmark changed. Both may import harness; a test never imports a benchmark,
a benchmark never imports a test, and a benchmark runs as `python -m bench.<name>` from the
repository root, so nothing in bench/ puts a folder on sys.path."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported(source: str, package: str) -> list[str]:
    """The modules of `package` that `source` imports, at any depth (a function's import too)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [name for name in names if name == package or name.startswith(package + ".")]
    return found


def path_inserts(source: str) -> list[int]:
    """The lines of `source` that call `sys.path.insert` (or `.append`)."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in {"insert", "append"} and ast.unparse(node.func.value) == "sys.path"]


def offenders(folder: str, check) -> dict[str, object]:
    files = sorted((ROOT / folder).rglob("*.py"))
    assert files, f"no Python files in {folder}/"
    return {str(path.relative_to(ROOT)): found for path in files if (found := check(path.read_text()))}


def test_no_test_imports_a_benchmark():
    found = offenders("tests", lambda source: imported(source, "bench"))
    assert not found, ("a test uses a benchmark's module (move what it needs into harness/, or into "
                       f"workbench/ if it is the app's logic): {found}")


def test_no_benchmark_imports_a_test():
    found = offenders("bench", lambda source: imported(source, "tests"))
    assert not found, f"bench/ imports from tests/ (move what it needs into harness/): {found}"


def test_no_benchmark_puts_a_folder_on_sys_path():
    found = offenders("bench", path_inserts)
    assert not found, ("bench/ changes sys.path (a benchmark runs as `python -m bench.<name>` from "
                       f"the repository root, which imports harness and workbench as they are): {found}")


def test_harness_imports_neither_tests_nor_bench():
    found = offenders("harness", lambda source: imported(source, "tests") + imported(source, "bench"))
    assert not found, f"harness/ imports tests/ or bench/, which both stand on it: {found}"


def test_the_checks_see_an_import_inside_a_function_and_a_path_insert():
    # The package's name is spliced in, so that a plain grep for imports of it stays clean here.
    bench = "bench"
    source = ("import sys\ndef f():\n    from tests.app.apptest import open_page\n"
              f"    import {bench}.fuzz\n    sys.path.insert(0, '.')\n")
    assert imported(source, "tests") == ["tests.app.apptest"]
    assert imported(source, bench) == [f"{bench}.fuzz"]
    assert path_inserts(source) == [5]
    assert imported(f"from testsuite import x\nimport {bench}mark\nimport harness.app\n", "tests") == []
    assert imported(f"import {bench}mark\nfrom harness import app\n", bench) == []
