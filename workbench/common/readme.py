"""The lesson-link parameter tables of docs/lesson-links.md, generated from the tools' settings
tables.

Each table sits between `<!-- settings:<tool> -->` and `<!-- /settings -->` in that document.
`python -m workbench.common.readme` rewrites them; tests/unit/common/test_readme.py fails when
the document and the tables disagree.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from workbench.common.links import LinkSchema
from workbench.lessons.settings import TABLE as LESSONS_TABLE
from workbench.tools import TOOLS

DOC = Path(__file__).resolve().parents[2] / "docs" / "lesson-links.md"
# Every link table, by the name its block has in the document: each tool's (with the moons
# trainer's comparison, `vs=`), then the lessons page's.
TABLES: dict[str, LinkSchema] = {
    name: table for tool in TOOLS for name, table in tool.link_tables.items()} | {"lessons": LESSONS_TABLE}
_BLOCK = re.compile(r"(<!-- settings:(?P<tool>[a-z_]+) -->\n)(?P<body>.*?)(<!-- /settings -->)", re.S)


def table_markdown(tool: str) -> str:
    return TABLES[tool].markdown_table()


def render(text: str) -> str:
    """`text` with every generated block replaced by the current table."""
    return _BLOCK.sub(lambda m: m.group(1) + table_markdown(m.group("tool")) + "\n" + m.group(4), text)


def blocks(text: str) -> list[str]:
    return [m.group("tool") for m in _BLOCK.finditer(text)]


if __name__ == "__main__":
    new = render(DOC.read_text())
    DOC.write_text(new)
    print(f"{DOC.name}: {len(blocks(new))} parameter tables written", file=sys.stderr)
