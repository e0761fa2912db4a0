"""Presenter mode's first screen of the Tensor inspector: the op chain, the step picker, and the
logical grid and storage strip of the drawn step, sized from the browser's viewport.

Normal mode keeps the page's sections in order (build x, apply ops, what PyTorch reports). On
a projector the teacher needs the pictures and the two controls that change them, so the page
opens with one compact row (the chain as typed, the step drawn, how cells are labelled), then
the grid with the step's strides beside it, then the storage strip across the page; everything
else follows below.

The server never knows the projector's size: the grid's height is `100vh` less what sits above
and below it (`fit_to_viewport`), and its width follows from that height and the grid's own
proportions (CSS), so cells stay about as wide as they are tall at 720 and at 1080 px.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from app_pages.tensor_inspector.figures import (
    STRIP_WIDTH,
    cell_width,
    grid_figure,
    grid_label,
    grid_size,
    grid_table,
    strip_figure,
    strip_label,
    strip_table,
)
from components.accessible_chart import chart, data_table
from components.plain_text import code_span
from components.stage import fit_to_viewport
from workbench.tensors.factory import shape_text
from workbench.tensors.facts import StepView
from workbench.tensors.layout import LayoutPicture

# What sits above the grid at presenter mode's 1.4x text, in CSS pixels: the main block's top
# padding, the title row, the compact row of controls and the gaps between them (measured in
# Chromium: the grid's top edge is at 206 px at 1280x720, 1366x768 and 1920x1080 alike).
ABOVE_GRID_PX = 215
# The strip's one-line caption, the gaps above and below it, and a little room at the bottom.
AROUND_STRIP_PX = 90
# The grid never squeezes its rows below MIN_SHRINK of their drawn height (about 33 px a row at
# presenter scale, room for 20 px labels) and never grows past MAX_GROWTH: the labels keep
# their size, so bigger cells would only be emptier.
MIN_SHRINK, MAX_GROWTH = 0.65, 1.6
# A failed step's line (with PyTorch's message in a popover) and its one-click fixes, above the
# grid (measured in Chromium: the grid starts 157 px lower at 1280x720, 1366x768 and 1920x1080).
# The grid may then squeeze its rows further: the error is the lesson on that screen.
FAILURE_PX = 157
MIN_SHRINK_WITH_FAILURE = 0.5
# Margins and axis labels of the grid figure that do not scale with its rows (grid_size).
GRID_FIXED_PX = 60
# The grid leaves the rest of its row to the step's facts, and at 1280 px that share is about
# this wide: the narrowest the grid's cells can be is worked out from it.
MAX_GRID_SHARE = 0.68
NARROWEST_GRID_PX = 820
# The shape of the grid's box at 1280x720 (width / height): small multiples are laid out in
# as many columns as bring the grid closest to it.
STAGE_ASPECT = 2.5
# What the stage draws of a large tensor: fewer rows, columns and slices than the normal page,
# and two rows of storage; the "Drawn in part" note beside the grid says what was left out.
STAGE_PICTURE = {"max_rows": 8, "max_cols": 12, "max_panels": 6, "max_strip": 2 * STRIP_WIDTH}


@dataclass(frozen=True)
class GridFit:
    """How tall the stage's grid may be, in CSS terms: `100vh - leave_px`, clamped."""

    leave_px: int
    min_px: int
    max_px: int
    aspect: float          # the grid figure's drawn width / height, kept on every screen

    def height_css(self) -> str:
        return f"min({self.max_px}px, max({self.min_px}px, calc(100vh - {self.leave_px}px)))"

    def width_css(self) -> str:
        return f"calc({self.height_css()} * {self.aspect:.3f})"


def grid_fit(grid_size: tuple[int, int], strip_height: int, *, failure_shown: bool = False) -> GridFit:
    """The grid's share of the viewport, from the sizes the figures were drawn at (`grid_size`
    = width, height of the grid figure; `strip_height` of the strip figure, which keeps its own
    height: its rows are one cell tall each). With `failure_shown` the failed step's line and
    its fixes sit above the grid, which gives up their height and may squeeze harder."""
    width, height = grid_size
    rows_px = max(height - GRID_FIXED_PX, 1)
    above = ABOVE_GRID_PX + (FAILURE_PX if failure_shown else 0)
    return GridFit(leave_px=above + AROUND_STRIP_PX + strip_height,
                   min_px=round(GRID_FIXED_PX + rows_px * (MIN_SHRINK_WITH_FAILURE if failure_shown
                                                           else MIN_SHRINK)),
                   max_px=round(height * MAX_GROWTH),
                   aspect=width / max(height, 1))


def stage_columns(picture: LayoutPicture) -> int:
    """Panels side by side on the stage: the count whose grid is closest in shape to the box
    the stage gives it (a wide, short box: the strip sits below)."""
    def mismatch(n_cols: int) -> float:
        width, height = grid_size(picture, n_cols)
        return abs(math.log(width / height / STAGE_ASPECT))

    return min(range(1, min(4, max(len(picture.panels), 1)) + 1), key=mismatch)


def narrowest_cell_px(picture: LayoutPicture, n_cols: int) -> float:
    """The narrowest a grid cell gets on the stage: its rows squeezed to MIN_SHRINK, or its
    width held to the grid's share of a 1280 px screen, whichever is narrower."""
    width, _ = grid_size(picture, n_cols)
    cells_across = n_cols * (picture.panels[0].cols if picture.panels else 1)
    fixed = width - cells_across * cell_width()
    return min(cell_width() * MIN_SHRINK, (NARROWEST_GRID_PX - fixed) / max(cells_across, 1))


@dataclass(frozen=True)
class Stage:
    """The slots of the first screen, filled as the page run gets to them: the chain's text
    box is drawn with the other settings, the step picker once the chain has been inspected."""

    chain: DeltaGenerator
    picker: DeltaGenerator
    labels: DeltaGenerator
    failure: DeltaGenerator
    pictures: DeltaGenerator


def stage_slots() -> Stage:
    with st.container(key="ti_stage"):
        chain, picker, labels = st.columns([2.1, 2.6, 1.5], gap="medium",
                                           vertical_alignment="top")
        failure = st.container()
        pictures = st.container()
    return Stage(chain, picker, labels, failure, pictures)


def _size(fig: go.Figure) -> tuple[int, int]:
    return int(fig.layout.width), int(fig.layout.height)


def _step_facts(drawn: StepView, picture: LayoutPicture, *, tight: bool = False) -> None:
    """The numbers a teacher points at next to the grid: shape, stride, offset, and the rule
    that turns an index into a storage position. Four short lines, so that the row stays as
    tall as the grid at 720 px; `tight` (a failure above took room from the grid): one
    paragraph, without the space between the lines."""
    facts = drawn.facts
    memory = ("a view of its input's storage" if facts.memory == "view" else "new memory (a copy)") \
        if drawn.step else "new memory"
    lines = [f"**Logical view** of {code_span(drawn.label)}"
             + (": one 2-D slice per panel" if picture.rank > 2 else ": what indexing sees"),
             f"shape {code_span(shape_text(facts.shape))} · stride "
             f"{code_span(shape_text(facts.stride))} · offset {code_span(facts.storage_offset)}",
             ("contiguous" if facts.is_contiguous else "**not** contiguous") + f" · {memory}"]
    if facts.numel and len(facts.stride):
        terms = " + ".join(f"i{d}·{s}" for d, s in enumerate(facts.stride))
        lines.append(f"`[i0, i1, ...]` is at storage position `{facts.storage_offset} + {terms}`")
    st.markdown(("  \n" if tight else "\n\n").join(lines))
    if picture.truncated:
        st.caption(":material/crop: **Drawn in part**: " + "; ".join(picture.truncated) + ".")


def stage_pictures(stage: Stage, drawn: StepView, picture: LayoutPicture, *, label: str,
                   show: str, whose: str, failure_shown: bool = False) -> None:
    """The grid (sized from the viewport) with the step's facts beside it, then the strip."""
    n_cols = stage_columns(picture)
    grid = grid_figure(picture, label=label, show=show, key="ti_grid", n_cols=n_cols,
                       cell_px=narrowest_cell_px(picture, n_cols))
    strip = strip_figure(picture, label=label, show=show, key="ti_strip")
    fit = grid_fit(_size(grid), _size(strip)[1], failure_shown=failure_shown)
    with stage.pictures:
        fit_to_viewport("ti_stage_grid", leave_px=fit.leave_px, min_px=fit.min_px,
                        max_px=fit.max_px)
        # The grid's column takes the width its proportions ask for at this height; the facts
        # take the rest of the row. (Streamlit wraps each container of a horizontal row in a
        # layout wrapper: the wrapper is the flex item.)
        st.html(f"""<style>
[data-testid=stLayoutWrapper]:has(> .st-key-ti_stage_grid) {{
  flex: 0 0 auto; width: {fit.width_css()}; max-width: {MAX_GRID_SHARE * 100:.0f}%; }}
[data-testid=stLayoutWrapper]:has(> .st-key-ti_stage_facts) {{ flex: 1 1 0; min-width: 0; }}
</style>""")
        with st.container(horizontal=True, gap="large", key="ti_stage_row"):
            with st.container(key="ti_stage_grid"):
                # Alone in its box (the box is sized to the viewport): its table goes under
                # the strip, below the first screen.
                chart(grid, key="ti_grid", label=grid_label(drawn.label, drawn.facts.shape),
                      table_below=False, width="stretch", height="stretch")
            with st.container(key="ti_stage_facts"):
                _step_facts(drawn, picture, tight=failure_shown)
        st.markdown(f"**Storage** of {code_span(drawn.label)}: {whose}. Grey: not read.")
        chart(strip, key="ti_strip", label=strip_label(drawn.label, whose), table_below=False,
              width="stretch")
        data_table(lambda: grid_table(picture), key="ti_grid_table",
                   label=grid_label(drawn.label, drawn.facts.shape))
        data_table(lambda: strip_table(picture, label=drawn.label), key="ti_strip_table",
                   label=strip_label(drawn.label, whose))
