"""The tables in an HTML string, read back as a browser would read them: each table's caption,
its rows, and each cell's tag, attributes and text (entities decoded). For tests of pages that
draw tables with st.html (the tensor inspector's grid and strip)."""
from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Cell:
    tag: str                      # "th" or "td"
    attrs: dict[str, str]
    text: str = ""

    @property
    def title(self) -> str:
        return self.attrs.get("title", "")

    def style(self, name: str) -> str | None:
        """One property of the cell's inline style, e.g. "background"."""
        for declaration in self.attrs.get("style", "").split(";"):
            key, _, value = declaration.partition(":")
            if key.strip() == name:
                return value.strip()
        return None


@dataclass
class Table:
    attrs: dict[str, str]
    caption: str = ""
    caption_attrs: dict[str, str] = field(default_factory=dict)
    head: list[list[Cell]] = field(default_factory=list)        # the rows of <thead>
    rows: list[list[Cell]] = field(default_factory=list)        # the rows of <tbody>

    def data_cells(self) -> list[list[Cell]]:
        """The body's <td> cells, row by row (the row headers left out)."""
        return [[cell for cell in row if cell.tag == "td"] for row in self.rows]


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[Table] = []
        self.in_caption = False
        self.in_head = False
        self.cell: Cell | None = None
        self.in_style = False

    def handle_starttag(self, tag, attrs):
        attributes = {k: v or "" for k, v in attrs}
        if tag == "style":
            self.in_style = True
        elif tag == "table":
            self.tables.append(Table(attributes))
        elif tag == "caption":
            self.in_caption = True
            self.tables[-1].caption_attrs = attributes
        elif tag == "thead":
            self.in_head = True
        elif tag == "tr":
            table = self.tables[-1]
            (table.head if self.in_head else table.rows).append([])
        elif tag in ("td", "th"):
            self.cell = Cell(tag, attributes)
            table = self.tables[-1]
            (table.head if self.in_head else table.rows)[-1].append(self.cell)

    def handle_endtag(self, tag):
        if tag == "style":
            self.in_style = False
        elif tag == "caption":
            self.in_caption = False
        elif tag == "thead":
            self.in_head = False
        elif tag in ("td", "th"):
            self.cell = None

    def handle_data(self, data):
        if self.in_style:
            return
        if self.in_caption:
            self.tables[-1].caption += data
        elif self.cell is not None:
            self.cell.text += data


def read_tables(markup: str) -> list[Table]:
    reader = _Reader()
    reader.feed(markup)
    return reader.tables
