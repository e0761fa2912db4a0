"""How big the autograd graph can be drawn on a projector's first screen.

In presenter mode the page puts the graph beside Next node / Back and the current step's story,
and scales it to the room the browser has left (CSS `vh` and `%`: the server never knows the
screen). Its text must stay readable from the back of a classroom: never below MIN_TEXT_PX. The
browser lays the graph out (Graphviz in WebAssembly), so the server knows its size only from
`estimate_size`. From that estimate this module plans the stage: the graph column's share of the
width, which of the graph's sides limits it, and the smallest viewport on which the fitted
graph's text reaches MIN_TEXT_PX. On a smaller screen the page draws the graph at its own size
instead, zoomed to SCROLL_TEXT_PX, in a box that scrolls. A graph too big for the design stage
(1280x720, the common projector) is "too big to read": the page says so and offers the
collapsed view.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app_pages.autograd_graph.drawing import Drawing, estimate_size

DESIGN_VIEWPORT = (1280, 720)
MIN_TEXT_PX = 14.0          # the smallest text a presenter's graph may show
SCROLL_TEXT_PX = 16.0       # its text when it cannot fit the screen and scrolls instead
MAX_TEXT_PX = 32.0          # a tiny graph is not blown up past this
# How far `estimate_size` may be off, measured against Chromium's layout of every example at
# three steps (tests/unit/autograd_graph/test_stage_plan.py keeps a few of those measurements): along the
# ranks (a top-to-bottom drawing's height, a left-to-right one's width) within 2%; across them,
# where Graphviz spreads the boxes to straighten the arrows, up to 27% (top to bottom) and 42%
# (left to right) more than estimated.
ALONG_MARGIN = 1.05
ACROSS_MARGIN = {"TB": 1.3, "LR": 1.75}

# The presenter page's geometry, in CSS px (components/stage.py: `html` at 140%, so 1rem =
# 22.4 px; the main block has 1.6rem of padding at each side; the stage's columns have the small
# gap, 1rem). The graph starts about 89 px down, under the one-line title (measured in Chromium
# at 1280x720); STAGE_TOP_PX and STAGE_BOTTOM_PX, what the page leaves above and below it,
# include a few px to spare.
REM_PX = 22.4
PAGE_SIDES_PX = 2 * 1.6 * REM_PX
COLUMN_GAP_PX = 1.0 * REM_PX
STAGE_TOP_PX = 96
STAGE_BOTTOM_PX = 14
GRAPH_SHARE = (0.42, 0.68)  # the graph column's share: the side column keeps room for the story


@dataclass(frozen=True)
class StagePlan:
    width_pt: float         # the largest drawing of the walk, as `estimate_size` gives it
    height_pt: float
    font_pt: float          # the size of the drawing's text, in the same units
    graph_share: float      # the graph column's share of the stage's width
    direction: str = "TB"   # the drawing's rankdir

    def box_px(self, viewport: tuple[int, int]) -> tuple[float, float]:
        """The graph column's width and the height left to the graph, at a viewport."""
        width, height = viewport
        columns = width - PAGE_SIDES_PX - COLUMN_GAP_PX
        return columns * self.graph_share, height - STAGE_TOP_PX - STAGE_BOTTOM_PX

    def _zooms(self, viewport: tuple[int, int]) -> tuple[float, float]:
        """px per point that fill the box's width and its height."""
        box_width, box_height = self.box_px(viewport)
        return box_width / self.width_pt, box_height / self.height_pt

    @property
    def along_bound(self) -> bool:
        """Whether the side along the ranks, the one the estimate knows within a few per cent,
        limits the graph on the design stage (the column grows with the screen, so it does on
        larger ones too). Then the page sizes the graph by that side alone, and a graph a little
        wider across than estimated scrolls that way rather than shrinking its text."""
        by_width, by_height = self._zooms(DESIGN_VIEWPORT)
        return by_height <= by_width if self.direction == "TB" else by_width <= by_height

    def text_px(self, viewport: tuple[int, int]) -> float:
        """The on-screen size of the graph's text when it is fitted into its box there."""
        by_width, by_height = self._zooms(viewport)
        if self.along_bound:
            return self.font_pt * (by_height if self.direction == "TB" else by_width)
        return self.font_pt * min(by_width, by_height)

    @property
    def margins(self) -> tuple[float, float]:
        """How much more room than estimated the graph may need: (width, height)."""
        across = 1.0 if self.along_bound else ACROSS_MARGIN[self.direction]
        return (ALONG_MARGIN, across) if self.direction == "LR" else (across, ALONG_MARGIN)

    @property
    def min_viewport(self) -> tuple[int, int]:
        """The smallest viewport on which the fitted graph's text reaches MIN_TEXT_PX, allowing
        for the estimate's error; smaller screens get the scrolling box."""
        zoom = MIN_TEXT_PX / self.font_pt
        width_margin, height_margin = self.margins
        width = self.width_pt * zoom * width_margin / self.graph_share + PAGE_SIDES_PX + COLUMN_GAP_PX
        height = self.height_pt * zoom * height_margin + STAGE_TOP_PX + STAGE_BOTTOM_PX
        return int(width) + 1, int(height) + 1

    @property
    def fits_design_stage(self) -> bool:
        width, height = self.min_viewport
        return width <= DESIGN_VIEWPORT[0] and height <= DESIGN_VIEWPORT[1]

    @property
    def design_text_px(self) -> float:
        return self.text_px(DESIGN_VIEWPORT)

    @property
    def design_text_px_at_worst(self) -> float:
        """The graph's text on the design stage if the estimate is as far off as it can be."""
        by_width, by_height = self._zooms(DESIGN_VIEWPORT)
        width_margin, height_margin = self.margins
        if self.along_bound:
            along = by_height / height_margin if self.direction == "TB" else by_width / width_margin
            return self.font_pt * along
        return self.font_pt * min(by_width / width_margin, by_height / height_margin)

    @property
    def max_height_px(self) -> int:
        """The fitted graph's height at which its text reaches MAX_TEXT_PX."""
        return int(self.height_pt * MAX_TEXT_PX / self.font_pt)

    @property
    def max_width_px(self) -> int:
        return int(self.width_pt * MAX_TEXT_PX / self.font_pt)

    @property
    def scroll_zoom(self) -> float:
        """CSS zoom of the graph drawn at its own size (a point of the drawing is 4/3 px) so
        that its text is SCROLL_TEXT_PX: exact, whatever the estimate."""
        return SCROLL_TEXT_PX / (self.font_pt * 4 / 3)


def plan_stage(pictures: Sequence[Drawing]) -> StagePlan:
    """The stage for a walk through backward(), from drawings spread over it (a presenter's
    drawing only gains values as the walk goes on, never boxes or ranks). One plan for the
    whole walk, so that Next node never rescales the graph or moves the columns."""
    sizes = [estimate_size(picture) for picture in pictures]
    width = max(w for w, _ in sizes)
    height = max(h for _, h in sizes)
    font_pt = 14 * pictures[0].scale
    _, design_height = DESIGN_VIEWPORT
    columns = DESIGN_VIEWPORT[0] - PAGE_SIDES_PX - COLUMN_GAP_PX
    # As wide as the graph is when it fills the height (and a tenth more), within the bounds
    # that keep the story beside it readable.
    wanted = 1.1 * width * (design_height - STAGE_TOP_PX - STAGE_BOTTOM_PX) / height / columns
    share = min(max(wanted, GRAPH_SHARE[0]), GRAPH_SHARE[1])
    return StagePlan(width, height, font_pt, round(share, 3), pictures[0].direction)
