"""A page's runnable script as a Jupyter notebook, one cell per `# %%` section.

Scripts from the code panels mark their sections with `# %%` (the convention of VS Code,
Spyder and Jupytext); `# %% [markdown]` sections become markdown cells with their leading `# `
removed. The notebook therefore runs exactly the code the page shows.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbformat.notebooknode import NotebookNode

_MARKER = re.compile(r"^# %%(.*)$")


def split_cells(script: str) -> list[tuple[str, str]]:
    """(kind, source) pairs: kind is 'code' or 'markdown'; empty sections are dropped."""
    cells: list[tuple[str, list[str]]] = [("code", [])]
    for line in script.splitlines():
        marker = _MARKER.match(line)
        if marker:
            kind = "markdown" if "[markdown]" in marker[1] else "code"
            title = marker[1].replace("[markdown]", "").strip()
            cells.append((kind, [f"# {title}"] if title and kind == "code" else []))
            continue
        cells[-1][1].append(line)
    out = []
    for kind, lines in cells:
        if kind == "markdown":
            lines = [re.sub(r"^# ?", "", line) for line in lines]
        source = "\n".join(lines).strip("\n")
        if kind == "code" and not _has_code(source):
            continue  # a section title with nothing under it
        if source.strip():
            out.append((kind, source))
    return out


def _has_code(source: str) -> bool:
    return any(line.strip() and not line.lstrip().startswith("#") for line in source.splitlines())


def script_to_notebook(script: str, title: str, intro: str = "") -> NotebookNode:
    import nbformat  # here, not at the top: only a download needs it (jsonschema is heavy)

    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    header = f"# {title}\n\n{intro}".strip()
    notebook.cells.append(nbformat.v4.new_markdown_cell(header))
    for kind, source in split_cells(script):
        make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        notebook.cells.append(make(source))
    nbformat.validate(notebook)
    return notebook


def notebook_bytes(script: str, title: str, intro: str = "") -> bytes:
    import nbformat

    return nbformat.writes(script_to_notebook(script, title, intro)).encode()
