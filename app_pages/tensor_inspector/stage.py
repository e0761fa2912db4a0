"""The Tensor inspector's first screen: the op chain, the step picker, and the logical grid and
storage strip of the drawn step, sized from the browser's viewport.

On a school laptop, a phone and a projector alike a learner (or the teacher) needs the
pictures and the two controls that change them first, so the page opens with one compact row
(the chain as typed, the step drawn, how cells are labelled), then the grid with the step's
strides beside it (under it on a phone), then the storage strip across the page; building x,
the op builder and what PyTorch reports follow below.

The server never knows the projector's size: the grid's box is `100vh` tall less what sits
above and below it (CSS), clamped so that its rows neither squeeze their labels nor grow into
empty slabs, and the grid's table fills the box, its rows sharing the height. Its width is what
the table is drawn at (in `rem`, which presenter mode enlarges), at most MAX_GRID_SHARE of the
row: a wide grid's cells, and their labels, narrow to fit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from app_pages.tensor_inspector.tables import (
    CELL_HEIGHT_REM,
    GRID_CLASS,
    STRIP_WIDTH,
    grid_html,
    grid_label,
    grid_rows,
    grid_width_rem,
    strip_html,
    strip_label,
    strip_rows,
)
from components.plain_text import code_span
from workbench.tensor_inspector.factory import shape_text
from workbench.tensor_inspector.facts import StepView
from workbench.tensor_inspector.layout import LayoutPicture

# One `rem` in presenter mode: the browser's 16 px at the 140% that components/stage.py sets.
PRESENTER_REM_PX = 16 * 1.4
# What sits above the grid at presenter mode's 1.4x text, in CSS pixels: the main block's top
# padding, the title row, the compact row of controls and the gaps between them (measured in
# Chromium: the grid's top edge is at 206 px at 1280x720, 1366x768 and 1920x1080 alike).
ABOVE_GRID_PX = 215
# The strip's one-line caption, the gaps above and below it, and a little room at the bottom.
AROUND_STRIP_PX = 90
# A table row, as the grid is drawn (CELL_HEIGHT_REM and the 2 px between rows), at presenter
# scale; the grid's rows never squeeze below MIN_SHRINK of it (room for their labels) and never
# grow past MAX_GROWTH: the labels keep their size, so bigger cells would only be emptier.
ROW_PX = CELL_HEIGHT_REM * PRESENTER_REM_PX + 2
MIN_SHRINK, MAX_GROWTH = 0.65, 1.6
# A failed step's line (with PyTorch's message in a popover) and its one-click fixes, above the
# grid (measured in Chromium: the grid starts 157 px lower at 1280x720, 1366x768 and 1920x1080).
# The grid may then squeeze its rows further: the error is the lesson on that screen.
FAILURE_PX = 157
MIN_SHRINK_WITH_FAILURE = 0.5
# The grid leaves the rest of its row to the step's facts.
MAX_GRID_SHARE = 0.68
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

    def height_css(self) -> str:
        return f"min({self.max_px}px, max({self.min_px}px, calc(100vh - {self.leave_px}px)))"


def grid_fit(grid_rows: int, strip_rows: int, *, failure_shown: bool = False) -> GridFit:
    """The grid's share of the viewport, from its table rows (`grid_rows`) and the strip's,
    which keeps its own height: its rows are one cell tall each. With `failure_shown` the failed
    step's line and its fixes sit above the grid, which gives up their height and may squeeze
    harder."""
    above = ABOVE_GRID_PX + (FAILURE_PX if failure_shown else 0)
    shrink = MIN_SHRINK_WITH_FAILURE if failure_shown else MIN_SHRINK
    return GridFit(leave_px=round(above + AROUND_STRIP_PX + strip_rows * ROW_PX),
                   min_px=round(grid_rows * ROW_PX * shrink),
                   max_px=round(grid_rows * ROW_PX * MAX_GROWTH))


def stage_columns(picture: LayoutPicture) -> int:
    """Slices side by side on the stage: the count whose grid is closest in shape to the box
    the stage gives it (a wide, short box: the strip sits below)."""
    def mismatch(n_cols: int) -> float:
        width = grid_width_rem(picture, n_cols)
        height = grid_rows(picture, n_cols) * CELL_HEIGHT_REM
        return abs(math.log(width / height / STAGE_ASPECT))

    return min(range(1, min(4, max(len(picture.panels), 1)) + 1), key=mismatch)


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


def stage_pictures(stage: Stage, drawn: StepView, picture: LayoutPicture, *, show: str,
                   whose: str, failure_shown: bool = False) -> None:
    """The grid (sized from the viewport) with the step's facts beside it, then the strip."""
    n_cols = stage_columns(picture)
    fit = grid_fit(grid_rows(picture, n_cols), strip_rows(picture), failure_shown=failure_shown)
    with stage.pictures:
        # The grid's column takes the width its table is drawn at, the facts the rest of the
        # row. (Streamlit wraps each container of a horizontal row in a layout wrapper: the
        # wrapper is the flex item.) The table fills its box, its rows sharing the height.
        st.html(f"""<style>
[data-testid=stLayoutWrapper]:has(> .st-key-ti_stage_grid) {{
  flex: 0 1 auto; width: {grid_width_rem(picture, n_cols):.3f}rem;
  max-width: {MAX_GRID_SHARE * 100:.0f}%; }}
[data-testid=stLayoutWrapper]:has(> .st-key-ti_stage_facts) {{ flex: 1 1 0; min-width: 0; }}
@media (max-width: 640px) {{    /* a phone: the facts go under the grid, which takes the width */
  [data-testid=stLayoutWrapper]:has(> .st-key-ti_stage_grid) {{ max-width: 100%; }}
  [data-testid=stLayoutWrapper]:has(> .st-key-ti_stage_facts) {{ flex-basis: 100%; }}
}}
.st-key-ti_grid div.{GRID_CLASS} {{ height: {fit.height_css()}; }}
.st-key-ti_grid div.{GRID_CLASS} > table.{GRID_CLASS} {{ height: 100%; }}
.st-key-ti_grid table.{GRID_CLASS} td {{ height: auto; }}
</style>""")
        with st.container(horizontal=True, gap="large", key="ti_stage_row"):
            with st.container(key="ti_stage_grid"), st.container(key="ti_grid"):
                st.html(grid_html(picture, label=drawn.label, show=show, n_cols=n_cols,
                                  caption=grid_label(drawn.label, drawn.facts.shape)))
            with st.container(key="ti_stage_facts"):
                _step_facts(drawn, picture, tight=failure_shown)
        st.markdown(f"**Storage** of {code_span(drawn.label)}: {whose}. Grey: not read.")
        with st.container(key="ti_strip"):
            st.html(strip_html(picture, label=drawn.label, show=show,
                               caption=strip_label(drawn.label, whose)))
