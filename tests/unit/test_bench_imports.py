"""bench/ stands on its own: the tests may import the benchmarks' helpers (bench/browser.py,
bench/stage.py, bench/st_client.py), never the other way round, so a benchmark runs from a
checkout whatever shape tests/ takes."""
from __future__ import annotations

import ast
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def imports_from_tests(source: str) -> list[str]:
    """The modules under `tests` that `source` imports, at any depth (a function's import too)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [name for name in names if name == "tests" or name.startswith("tests.")]
    return found


def test_no_benchmark_imports_from_tests():
    scripts = sorted(BENCH.glob("*.py"))
    assert scripts, f"no scripts in {BENCH}"
    offenders = {path.name: found for path in scripts
                 if (found := imports_from_tests(path.read_text()))}
    assert not offenders, f"bench/ imports from tests/: {offenders}"


def test_the_check_sees_an_import_inside_a_function():
    source = "def f():\n    from tests.app.apptest import open_page\n    import tests.e2e.stage\n"
    assert imports_from_tests(source) == ["tests.app.apptest", "tests.e2e.stage"]
    assert imports_from_tests("from testsuite import x\nimport bench.stage\n") == []
