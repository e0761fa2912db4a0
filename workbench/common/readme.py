"""The lesson-link parameter tables of docs/lesson-links.md, generated from the tools' settings
tables.

Each table sits between `<!-- settings:<tool> -->` and `<!-- /settings -->` in that document.
`python -m workbench.common.readme` rewrites them; tests/unit/common/test_readme.py fails when
the document and the tables disagree.
"""
from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "lesson-links.md"
TABLES = {
    "tensor_inspector": "workbench.tensor_inspector.settings",
    "autograd_graph": "workbench.autograd_graph.settings",
    "moons_trainer": "workbench.moons_trainer.settings",
    "moons_compare": "workbench.moons_trainer.compare",       # a comparison link's `vs=`
    "batch_iterator": "workbench.batch_iterator.settings",
    "lessons": "workbench.lessons.settings",
}
_BLOCK = re.compile(r"(<!-- settings:(?P<tool>[a-z_]+) -->\n)(?P<body>.*?)(<!-- /settings -->)", re.S)


def table_markdown(tool: str) -> str:
    return importlib.import_module(TABLES[tool]).TABLE.markdown_table()


def render(text: str) -> str:
    """`text` with every generated block replaced by the current table."""
    return _BLOCK.sub(lambda m: m.group(1) + table_markdown(m.group("tool")) + "\n" + m.group(4), text)


def blocks(text: str) -> list[str]:
    return [m.group("tool") for m in _BLOCK.finditer(text)]


if __name__ == "__main__":
    new = render(DOC.read_text())
    DOC.write_text(new)
    print(f"{DOC.name}: {len(blocks(new))} parameter tables written", file=sys.stderr)
