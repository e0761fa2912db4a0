"""The Tensor inspector's logical grid and storage strip as HTML tables.

Tables, not Plotly heatmaps: Append and Undo redraw both on every click, and the two heatmaps
took most of the ~870 ms a click needed to paint in Chromium, where a table of the same cells
is inserted in a few milliseconds (the batch iterator's index grid made the same move:
app_pages/batch_iterator/grid.py). A table is also its own text alternative: row and column
headers a screen reader can walk, each cell's value or position as text, and what a hover on
the heatmap said in the cell's title.

The grid and the strip share one colour scale: an element of x keeps its colour wherever a view
moves it, so after a transpose the eye follows the view jumping through memory. Each cell's
colour is Plotly's own interpolation of that scale, worked out here, so the page's pictures
still agree with any Plotly picture of the same scale.

Sizes are in `rem`, which presenter mode enlarges 1.4x; a cell's text also shrinks with the
table's width (`cqw`) when a narrow column squeezes the cells.
"""
from __future__ import annotations

import functools
import html

from plotly.colors import sample_colorscale

from workbench.common.palette import BLACK, CELL_SCALE_COLOURS, GREY_300, GREY_800, WHITE
from workbench.common.theme import contrast
from workbench.tensor_inspector.factory import shape_text
from workbench.tensor_inspector.layout import LayoutPicture, Panel

# Light tones only, so black cell labels stay readable on every colour; told apart with every
# common colour-vision deficiency (workbench/common/palette.py).
CELL_SCALE = [[k / (len(CELL_SCALE_COLOURS) - 1), colour] for k, colour in enumerate(CELL_SCALE_COLOURS)]
STRIP_WIDTH = 24
# Storage this view does not read: grey, its text dark enough for 4.5:1 (GREY_600, the
# heatmap's, reached 3.2:1 on GREY_300).
UNREAD_BACKGROUND, UNREAD_TEXT = GREY_300, GREY_800

GRID_CLASS, STRIP_CLASS = "wb-tensor-grid", "wb-tensor-strip"
# A cell as wide and tall as the heatmaps drew them at normal scale (52 x 34 px in the grid,
# 44 px wide in the strip), the row numbers' column, and the labels' 13 px.
CELL_WIDTH_REM, CELL_HEIGHT_REM, STRIP_CELL_WIDTH_REM = 3.25, 2.125, 2.75
ROW_HEADER_REM, STRIP_ROW_HEADER_REM = 2.0, 4.5
LABEL_REM = 0.8125
PANEL_GAP_REM = 1.25
# A slice's title above its table, one line: a table's height leaves its caption out, so a
# slice that fills its share of the stage's grid is this much shorter than the share.
CAPTION_REM = 1.3          # its line (1.1rem) and the space under it (0.2rem)


def grid_label(name: str, shape: tuple[int, ...]) -> str:
    """The logical view's accessible name: its table's caption."""
    return f"Logical view of {name}, shape {shape_text(shape)}"


def strip_label(name: str, whose: str) -> str:
    return f"Storage of {name}: {whose}"


@functools.lru_cache(maxsize=4096)
def _scale_colour(fraction: float) -> str:
    red, green, blue = sample_colorscale(CELL_SCALE, [fraction], colortype="tuple")[0]
    return "#" + "".join(f"{round(channel * 255):02X}" for channel in (red, green, blue))


def cell_colour(picture: LayoutPicture, colour: int) -> str:
    """The background of an element whose colour number is `colour` (its origin id in x, or
    its storage position on the meta device), on the scale the grid and the strip share."""
    span = picture.colour_max - picture.colour_min
    fraction = 0.0 if span <= 0 else min(1.0, max(0.0, (colour - picture.colour_min) / span))
    return _scale_colour(round(fraction, 6))


def text_colour(background: str) -> str:
    """Black or white, whichever reads better on `background`."""
    return BLACK if contrast(BLACK, background) >= contrast(WHITE, background) else WHITE


def _label_rem(texts: list[str]) -> float:
    """Smaller labels for long numbers, so 5- and 6-digit positions stay inside their cell."""
    longest = max((len(t) for t in texts), default=1)
    return LABEL_REM * (1.0 if longest <= 4 else 0.8 if longest <= 6 else 0.65)


def _fitting_font(texts: list[str], cells_across: float) -> str:
    """The labels' size: `_label_rem`, or less when the table is squeezed so narrow that the
    longest label would not fit one of `cells_across` cells (a digit is about 0.6 em wide,
    and the cell keeps a little room either side; `cqw` is a percent of the wrapper's width)."""
    longest = max((len(t) for t in texts), default=1)
    fit = 100 / (cells_across * max(longest, 1) * 0.62 + cells_across * 0.5)
    return f"min({_label_rem(texts):.4f}rem, {fit:.3f}cqw)"


def _css(kind: str) -> str:
    """The style both tables share, under their own class. Every cell sets its background and
    its text colour itself; the headers and the caption take the theme's text colour."""
    return f"""<style>
div.{kind} {{ container-type: inline-size; }}
table.{kind} {{ border-collapse: separate; border-spacing: 2px; table-layout: fixed; width: 100%;
  margin: 0; font-variant-numeric: tabular-nums; line-height: 1.1; }}
table.{kind} caption {{ caption-side: top; text-align: left; font-size: 0.8rem; white-space: nowrap;
  line-height: 1.1rem; padding: 0 0 0.2rem; }}
.{kind} .wb-visually-hidden {{ position: absolute; width: 1px; height: 1px; overflow: hidden;
  clip-path: inset(50%); white-space: nowrap; padding: 0; margin: -1px; }}
table.{kind} th, table.{kind} td {{ padding: 0 1px; text-align: center; overflow: hidden;
  white-space: nowrap; border: none; }}
table.{kind} th {{ font-weight: normal; font-size: 0.75rem; }}
table.{kind} tbody th {{ text-align: right; padding-right: 0.3rem; }}
table.{kind} td {{ height: {CELL_HEIGHT_REM}rem; }}
table.{kind} td.unread {{ background: {UNREAD_BACKGROUND}; color: {UNREAD_TEXT}; }}
table.{kind} .corner {{ width: {ROW_HEADER_REM}rem; }}
</style>"""


def _cell(text: str, title: str, background: str) -> str:
    return (f'<td style="background:{background};color:{text_colour(background)}" '
            f'title="{html.escape(title)}">{html.escape(text)}</td>')


def _index_text(lead: tuple[int, ...], rank: int, r: int, c: int) -> str:
    index = () if rank == 0 else (c,) if rank == 1 else (*lead, r, c)
    return "[" + ", ".join(str(i) for i in index) + "]"


def _panel_texts(panel: Panel, show: str) -> list[list[str]]:
    return [[str(panel.positions[r][c]) if show == "positions" or panel.values is None
             else panel.values[r][c] for c in range(panel.cols)] for r in range(panel.rows)]


def _panel_table(picture: LayoutPicture, panel: Panel, *, label: str, show: str, caption: str,
                 caption_shown: bool, font: str) -> str:
    """One 2-D slice: column numbers on top, row numbers on the left (a scalar has neither, a
    1-D tensor no row numbers: it is one row)."""
    rank = picture.rank
    texts = _panel_texts(panel, show)
    row_numbers, column_numbers = rank >= 2, rank >= 1
    head = ""
    if column_numbers:
        corner = '<td class="corner"></td>' if row_numbers else ""
        head = ("<thead><tr>" + corner
                + "".join(f'<th scope="col">{c}</th>' for c in range(panel.cols)) + "</tr></thead>")
    rows = []
    for r in range(panel.rows):
        cells = []
        for c in range(panel.cols):
            value = panel.values[r][c] if panel.values is not None else "not materialized"
            title = (f"{label}{_index_text(panel.lead, rank, r, c)} = {value} · "
                     f"storage position {panel.positions[r][c]}")
            cells.append(_cell(texts[r][c], title, cell_colour(picture, panel.colours[r][c])))
        header = f'<th scope="row">{r}</th>' if row_numbers else ""
        rows.append(f"<tr>{header}{''.join(cells)}</tr>")
    hidden = "" if caption_shown else ' class="wb-visually-hidden"'
    width = (ROW_HEADER_REM if row_numbers else 0) + panel.cols * CELL_WIDTH_REM
    return (f'<table class="{GRID_CLASS}" style="max-width:{width:.3f}rem;font-size:{font}">'
            f"<caption{hidden}>{html.escape(caption)}</caption>{head}"
            f"<tbody>{''.join(rows)}</tbody></table>")


def grid_width_rem(picture: LayoutPicture, n_cols: int = 1) -> float:
    """How wide the grid is drawn, `n_cols` slices side by side."""
    panels = picture.panels
    cols = panels[0].cols if panels else 1
    row_header = ROW_HEADER_REM if picture.rank >= 2 else 0
    n_cols = max(1, min(n_cols, len(panels)))
    return n_cols * (row_header + cols * CELL_WIDTH_REM) + (n_cols - 1) * PANEL_GAP_REM


def grid_rows(picture: LayoutPicture, n_cols: int = 1) -> int:
    """The grid's table rows from top to bottom, `n_cols` slices side by side: a slice's rows,
    its column numbers, and its title for small multiples."""
    panels = picture.panels
    rows = panels[0].rows if panels else 1
    if picture.rank <= 2:
        return rows + (1 if picture.rank >= 1 else 0)
    return max(1, -(-len(panels) // max(n_cols, 1))) * (rows + 2)


def grid_html(picture: LayoutPicture, *, label: str, show: str, caption: str,
              n_cols: int | None = None) -> str:
    """The logical view: one table (rank <= 2), or small multiples of 2-D slices (rank 3-5),
    one table per slice with the slice's title as its caption. `caption` (plain text) names
    the grid. Slices sit side by side as many as fit the column, or `n_cols` of them in a
    grid of equal cells (presenter mode's stage, whose box the grid fills). `label` is the
    step's code, `show` "positions" labels cells with their storage position instead of their
    value."""
    panels = picture.panels
    texts = [t for panel in panels for row in _panel_texts(panel, show) for t in row]
    cols = panels[0].cols if panels else 1
    row_header_cells = 1 if picture.rank >= 2 else 0
    if picture.rank <= 2:
        font = _fitting_font(texts, cols + row_header_cells + 0.5)
        tables = "".join(_panel_table(picture, panel, label=label, show=show, caption=caption,
                                      caption_shown=False, font=font) for panel in panels)
        return f'{_css(GRID_CLASS)}<div class="{GRID_CLASS}">{tables}</div>'
    across = n_cols or 1
    font = _fitting_font(texts, across * (cols + row_header_cells) + (across - 1) * 0.5 + 0.5)
    tables = "".join(_panel_table(picture, panel, label=label, show=show, caption=panel.title,
                                  caption_shown=True, font=font) for panel in panels)
    if n_cols is None:       # every slice as wide as it is drawn, wrapped onto as many rows as needed
        layout = (f"display: flex; flex-wrap: wrap; align-items: flex-start; "
                  f"gap: 0.5rem {PANEL_GAP_REM}rem; }}\n"
                  f"figure.{GRID_CLASS} > table {{ width: {grid_width_rem(picture):.3f}rem;")
    else:
        layout = (f"display: grid; grid-template-columns: repeat({n_cols}, minmax(0, 1fr)); "
                  f"grid-auto-rows: 1fr; gap: 0.3rem {PANEL_GAP_REM}rem; height: 100%; }}\n"
                  f"figure.{GRID_CLASS} > table {{ height: calc(100% - {CAPTION_REM}rem);")
    return (f"{_css(GRID_CLASS)}<style>figure.{GRID_CLASS} {{ margin: 0; {layout} }}</style>"
            f'<div class="{GRID_CLASS}"><figure class="{GRID_CLASS}">'
            f'<figcaption class="wb-visually-hidden">{html.escape(caption)}</figcaption>'
            f"{tables}</figure></div>")


def strip_cells(picture: LayoutPicture, *, label: str, show: str) -> list[tuple[str, str, str | None]]:
    """Each drawn storage position as (text, title, background): None for a position this
    view does not read."""
    values = picture.strip_values
    cells = []
    for p in picture.strip_positions:
        colour = picture.strip_colours[p]
        value = values[p] if values is not None else None
        text = str(p) if show == "positions" or value is None else value
        reader = picture.strip_readers[p]
        if colour is None:
            cells.append((text, f"storage position {p} · value {value} · not read by this view",
                          None))
            continue
        title = (f"storage position {p}" + (f" · value {value}" if value else "")
                 + (f" · read by {label}{reader}" if reader else ""))
        cells.append((text, title, cell_colour(picture, colour)))
    return cells


def strip_rows(picture: LayoutPicture) -> int:
    """The strip's table rows: its column numbers, and one row per STRIP_WIDTH positions."""
    return 1 + max(1, -(-len(picture.strip_positions) // STRIP_WIDTH))


def strip_html(picture: LayoutPicture, *, label: str, show: str, caption: str) -> str:
    """The flat storage as one table, in rows of STRIP_WIDTH positions, each row headed by the
    position of its first cell; grey cells are not read by this view. `caption` (plain text)
    names it."""
    cells = strip_cells(picture, label=label, show=show)
    width = min(STRIP_WIDTH, max(len(cells), 1))
    rows = []
    for start in range(0, len(cells), width):
        tds = [_cell(text, title, background) if background is not None else
               f'<td class="unread" title="{html.escape(title)}">{html.escape(text)}</td>'
               for text, title, background in cells[start:start + width]]
        tds += ["<td></td>"] * (width - len(tds))
        rows.append(f'<tr><th scope="row">{start}</th>{"".join(tds)}</tr>')
    head = ('<thead><tr><th scope="col">position</th>'
            + "".join(f'<th scope="col">{c}</th>' for c in range(width)) + "</tr></thead>")
    font = _fitting_font([text for text, _, _ in cells],
                         width + STRIP_ROW_HEADER_REM / STRIP_CELL_WIDTH_REM + 0.5)
    max_width = STRIP_ROW_HEADER_REM + width * STRIP_CELL_WIDTH_REM
    return (f"{_css(STRIP_CLASS)}<style>table.{STRIP_CLASS} tr > th:first-child "
            f"{{ width: {STRIP_ROW_HEADER_REM}rem; }}</style>"
            f'<div class="{STRIP_CLASS}"><table class="{STRIP_CLASS}" '
            f'style="max-width:{max_width:.3f}rem;font-size:{font}">'
            f'<caption class="wb-visually-hidden">{html.escape(caption)}</caption>{head}'
            f"<tbody>{''.join(rows)}</tbody></table></div>")
