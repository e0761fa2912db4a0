"""docs/verdicts.md names, for each sentence that judges numbers, the tests that drive it: each
named test must be a test function defined somewhere under tests/."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "verdicts.md"


def _tests_named_in_the_doc() -> list[tuple[str, list[str]]]:
    """(the row's first cell, the test names in its last cell) for every table row."""
    rows = []
    for line in DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3 or set(cells[0]) <= {"-"} or cells[0] == "Where":
            continue
        rows.append((cells[0], re.findall(r"`(test_\w+)`", cells[-1])))
    return rows


def _test_functions() -> set[str]:
    names = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_"):
                names.add(node.name)
    return names


def test_every_verdict_row_names_a_test_and_every_named_test_exists():
    rows = _tests_named_in_the_doc()
    assert len(rows) >= 10, "the tables were not found"
    defined = _test_functions()
    for where, tests in rows:
        assert tests, f"{where}: no test named"
        missing = [name for name in tests if name not in defined]
        assert not missing, f"{where}: {missing} not defined under tests/"


def test_the_check_fails_on_a_test_that_does_not_exist():
    assert "test_no_such_verdict_test_anywhere" not in _test_functions()
    assert "test_every_verdict_row_names_a_test_and_every_named_test_exists" in _test_functions()
