"""The index grid as an HTML table: one row per epoch, one column per dataset index, each cell
holding the number of the batch that index landed in.

A table, not a Plotly heatmap: Next redraws the grid on every step, and a heatmap cost about
200 ms of each step in Chromium plus 70 ms of building the figure on the server, where a table
of the same cells is inserted in a few milliseconds. A table is also what a screen reader can
walk (row and column headers), and every cell says its batch number as text and in its title, so
the colours are never the only way to tell batches apart.
"""
from __future__ import annotations

import dataclasses
import html
from dataclasses import dataclass

from components.accessible_theme import THEME_ATTRIBUTE
from workbench.batch_iterator.runs import BatchRecord, LoaderRun
from workbench.common.palette import BLACK, GREY_250, GREY_800, OKABE_ITO, WHITE
from workbench.common.theme import DARK, LIGHT, contrast, readable

# Batch colours: Okabe & Ito without black, so that a frame and the batch number stay visible on
# every cell; they repeat every seven batches (the number in the cell tells them apart). An
# eighth, grey, was too close to the purple for a deuteranope (tests/unit/common/test_colour_vision.py).
BATCH_COLOURS = OKABE_ITO[:7]
CLASS_COLOURS = (GREY_250, GREY_800)
# Above this many columns a cell is too narrow for its number (a 900 px column holds about 60):
# the cells keep their colour and title, and only every tenth column is numbered.
MAX_CELL_TEXT = 60
MISSING_MARK = "✕"


@dataclass(frozen=True)
class GridCell:
    """One cell: its text, its colour class (`c0`/`c1` for a class, `b0`-`b7` for a batch, ""
    for the page's own background), what hovering it says, and whether it belongs to the
    current batch or to no batch although the sampler could draw it."""

    text: str
    shade: str
    title: str
    current: bool = False
    missing: bool = False


def text_colour(background: str) -> str:
    """Black or white, whichever reads better on `background` (every batch colour reaches 4.5:1
    with one of them: tests/unit/common/test_colour_vision.py)."""
    return BLACK if contrast(BLACK, background) >= contrast(WHITE, background) else WHITE


def missing_reason(run: LoaderRun, epoch: int, index: int, pool: set[int]) -> str:
    """Why no batch of `epoch` holds `index`, in the learner's words."""
    settings = run.settings
    if index not in pool:
        return "not in the subset SubsetRandomSampler draws from"
    summary = run.summaries()[epoch]
    with_replacement = settings.sampler in ("replacement", "weighted")
    if summary.dropped > 0 and not with_replacement:
        return "drawn, but in the short last batch that drop_last=True threw away"
    if with_replacement:
        return "never drawn this epoch: sampling with replacement draws some twice, some never"
    return "not drawn this epoch"


def grid_rows(run: LoaderRun, current: BatchRecord | None) -> list[tuple[str, list[GridCell]]]:
    """The grid's rows with their names: the class of each index, then one row per epoch."""
    n = run.dataset_size
    framed = set(current.indices) if current is not None else set()
    rows = [("class", [GridCell(str(label), f"c{label}",
                                f"index {index} · class {label} · length {run.lengths[index]}",
                                current=index in framed)
                       for index, label in enumerate(run.labels)])]
    pool = set(run.pool)
    for epoch in range(run.settings.epochs):
        landed: dict[int, list[int]] = {}
        for record in run.epoch_records(epoch):
            for index in record.indices:
                landed.setdefault(index, []).append(record.number)
        cells = []
        for index in range(n):
            batches = landed.get(index)
            is_current = current is not None and current.epoch == epoch and index in framed
            if batches is None:
                in_pool = index in pool
                cells.append(GridCell(MISSING_MARK if in_pool else "", "",
                                      f"index {index}: {missing_reason(run, epoch, index, pool)}",
                                      missing=in_pool))
                continue
            times = f" ({len(batches)} times)" if len(batches) > 1 else ""
            cells.append(GridCell(
                str(batches[0]) if len(batches) == 1 else f"{batches[0]}×{len(batches)}",
                f"b{batches[0] % len(BATCH_COLOURS)}",
                f"index {index} · epoch {epoch} · batch {', '.join(map(str, batches))}{times}"
                + (" · the batch below" if is_current else ""),
                current=is_current))
        rows.append((f"epoch {epoch}", cells))
    return rows


GRID_CLASS = "wb-batch-grid"
# A black ring inside a white one: visible on every batch colour and on both themes.
_FRAME = f"inset 0 0 0 2px {BLACK}, inset 0 0 0 4px {WHITE}"
# The theme the learner chose, as components/accessible_theme.py marks it on <html>.
_DARK = f'html[{THEME_ATTRIBUTE}="dark"]'


def _shade_rules() -> str:
    shades = [(f"c{label}", colour) for label, colour in enumerate(CLASS_COLOURS)]
    shades += [(f"b{number}", colour) for number, colour in enumerate(BATCH_COLOURS)]
    return "\n".join(f"table.{GRID_CLASS} td.{name} {{ background: {colour}; "
                     f"color: {text_colour(colour)}; }}" for name, colour in shades)


def _css(columns: int, longest: int) -> str:
    """The table's style. Its sizes are in `rem`, which presenter mode enlarges 1.4x; a cell's
    text also shrinks with the table's width (`cqw`, a percent of the wrapper's width) so that
    the longest of its `longest` characters still fits one of `columns` cells (a digit is about
    0.6 em wide; the row names take about five cells)."""
    fit = 100 / ((columns + 5) * max(longest, 1) * 0.62)
    return f"""<style>
div.{GRID_CLASS} {{ container-type: inline-size; }}
table.{GRID_CLASS} {{ border-collapse: separate; border-spacing: 1px 3px; table-layout: fixed;
  width: 100%; margin: 0; font-variant-numeric: tabular-nums; line-height: 1.1; }}
table.{GRID_CLASS} caption {{ caption-side: bottom; text-align: left; font-size: 0.8rem;
  padding-top: 0.25rem; }}
table.{GRID_CLASS} th, table.{GRID_CLASS} td {{ padding: 0; text-align: center;
  font-size: min(0.8rem, {fit:.3f}cqw); overflow: hidden; white-space: nowrap; border: none; }}
table.{GRID_CLASS} thead th {{ font-weight: normal; }}
table.{GRID_CLASS} tr > th:first-child {{ width: 4.6rem; font-size: 0.8rem; text-align: right;
  padding-right: 0.4rem; font-weight: normal; }}
table.{GRID_CLASS} td {{ height: 1.75rem; }}
{_shade_rules()}
table.{GRID_CLASS} td.now {{ box-shadow: {_FRAME}; font-weight: 700; }}
table.{GRID_CLASS} td.gone {{ color: {readable(OKABE_ITO[3], LIGHT)}; font-weight: 700; }}
{_DARK} table.{GRID_CLASS} td.gone {{ color: {readable(OKABE_ITO[3], DARK)}; }}
table.{GRID_CLASS}.dense {{ border-spacing: 0 3px; }}
table.{GRID_CLASS}.dense thead th {{ overflow: visible; text-align: left; font-size: 0.7rem; }}
/* Cells a few pixels wide have no room for a frame: the current batch's are filled with the
   text colour (no batch colour is black or white), the dropped ones vermilion. */
table.{GRID_CLASS}.dense td.now {{ background: {LIGHT.text} !important; box-shadow: none; }}
{_DARK} table.{GRID_CLASS}.dense td.now {{ background: {DARK.text} !important; }}
table.{GRID_CLASS}.dense td.gone {{ background: {OKABE_ITO[3]}; }}
</style>"""


def _cell_html(cell: GridCell, dense: bool) -> str:
    """A `<td>`. A dense grid's cells (a few pixels wide) carry their colour alone, and a title
    only where it says more than the colour: every title on 3,000 cells made the table 400 KB,
    which the browser's sanitizer took most of a step to read."""
    kinds = [cell.shade] if cell.shade else []
    kinds += [name for name, on in (("now", cell.current), ("gone", cell.missing)) if on]
    attributes = f' class="{" ".join(kinds)}"' if kinds else ""
    if not dense or cell.current or cell.missing:
        attributes += f' title="{html.escape(cell.title)}"'
    return f"<td{attributes}>{'' if dense else html.escape(cell.text)}</td>"


def grid_html(run: LoaderRun, current: BatchRecord | None, caption: str) -> str:
    """The grid as one `<table>` with its style; `caption` (plain text) names what it shows."""
    n = run.dataset_size
    show_text = n <= MAX_CELL_TEXT
    head = "".join(f"<th>{index}</th>" if show_text or index % 10 == 0 else "<th></th>"
                   for index in range(n))
    rows = grid_rows(run, current)
    if not show_text:   # a filled class cell would read as a class: only the epoch's row is marked
        rows[0] = (rows[0][0], [dataclasses.replace(cell, current=False) for cell in rows[0][1]])
    body = "".join(
        f'<tr><th scope="row">{html.escape(name)}</th>'
        + "".join(_cell_html(cell, dense=not show_text) for cell in cells) + "</tr>"
        for name, cells in rows)
    dense = "" if show_text else " dense"
    # A dense grid's cells carry colour alone: assistive technology reads `batch_list_html`.
    hidden = "" if show_text else ' aria-hidden="true"'
    longest = max((len(cell.text) for _, cells in rows for cell in cells), default=1)
    return (f'{_css(n, max(longest, len(str(n - 1))))}<div class="{GRID_CLASS}">'
            f'<table class="{GRID_CLASS}{dense}"{hidden}><caption>{html.escape(caption)}</caption>'
            f'<thead><tr><th scope="col">index</th>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def batch_list_html(run: LoaderRun) -> str:
    """Every batch's indices, epoch by epoch, in a closed `<details>`: what a grid too dense for
    numbers shows by colour alone, as text (for a screen reader, and for anyone who wants to
    know which batch a thin cell is). It changes with the run only, not with a step, so Streamlit
    leaves it in place (open, if the learner opened it) when Next redraws the grid."""
    epochs = "".join(
        f"<li>epoch {epoch}: "
        + "; ".join(f"batch {r.number} [{', '.join(map(str, r.indices))}]"
                    for r in run.epoch_records(epoch)) + "</li>"
        for epoch in range(run.settings.epochs))
    return (f'<style>details.{GRID_CLASS} {{ font-size: 0.8rem; margin: 0; }} '
            f'details.{GRID_CLASS} ul {{ margin: 0.25rem 0 0 0; }}</style>'
            f'<details class="{GRID_CLASS}"><summary>Every batch\'s indices, epoch by epoch '
            f"(the grid's cells as text)</summary><ul>{epochs}</ul></details>")
