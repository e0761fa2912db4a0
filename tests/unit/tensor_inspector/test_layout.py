"""Sizes of presenter mode's stage in the Tensor inspector (app_pages/tensor_inspector/stage.py):
how tall the grid may be, and how many slices side by side."""
from __future__ import annotations

import math

from app_pages.tensor_inspector import stage, tables
from workbench.tensor_inspector.layout import layout_picture
from workbench.tensor_inspector.report import inspect
from workbench.tensor_inspector.settings import TensorSettings


def _picture(shape: tuple[int, ...], **limits):
    """The picture of x itself, as the page draws it."""
    report = inspect(TensorSettings(shape=shape))
    return layout_picture(report.result, colour_max=report.views[0].facts.numel - 1, **limits)


def test_the_grid_gets_the_viewport_less_what_sits_above_and_below_it():
    fit = stage.grid_fit(grid_rows=5, strip_rows=2)
    assert fit.leave_px == round(stage.ABOVE_GRID_PX + stage.AROUND_STRIP_PX + 2 * stage.ROW_PX)
    assert fit.min_px == round(5 * stage.ROW_PX * stage.MIN_SHRINK)
    assert fit.max_px == round(5 * stage.ROW_PX * stage.MAX_GROWTH)
    assert fit.height_css() == (f"min({fit.max_px}px, max({fit.min_px}px, "
                                f"calc(100vh - {fit.leave_px}px)))")
    # At 1280x720 a 4x4 grid (and its column numbers) over a one-row strip gets more than the
    # rows it is drawn with at normal size.
    assert 720 - fit.leave_px > 5 * stage.ROW_PX
    # A failure above the grid takes its height, and the rows may squeeze further.
    failing = stage.grid_fit(grid_rows=5, strip_rows=2, failure_shown=True)
    assert failing.leave_px == fit.leave_px + stage.FAILURE_PX
    assert failing.min_px < fit.min_px


def test_the_grid_and_strip_rows_count_headers_and_slice_titles():
    assert tables.grid_rows(_picture((4, 6))) == 5               # column numbers + 4 rows
    assert tables.grid_rows(_picture((6,))) == 2
    assert tables.grid_rows(_picture(())) == 1
    # four 2x3 slices, two side by side: two rows of slices, each a title, numbers and 2 rows
    assert tables.grid_rows(_picture((4, 2, 3)), n_cols=2) == 2 * (2 + 2)
    assert tables.strip_rows(_picture((4, 6))) == 2
    assert tables.strip_rows(_picture((5, 10))) == 4


def test_slices_go_side_by_side_as_the_stage_box_asks():
    picture = _picture((4, 2, 3))             # four 2x3 slices
    chosen = stage.stage_columns(picture)

    def mismatch(n):
        width = tables.grid_width_rem(picture, n)
        height = tables.grid_rows(picture, n) * tables.CELL_HEIGHT_REM
        return abs(math.log(width / height / stage.STAGE_ASPECT))
    assert all(mismatch(chosen) <= mismatch(n) for n in range(1, 5))
    assert 1 < chosen < 4                     # neither one tall column nor one long row
    assert stage.stage_columns(_picture((4, 6))) == 1


def test_the_stage_draws_two_rows_of_storage_and_says_so():
    picture = _picture((12, 16), **stage.STAGE_PICTURE)
    assert len(picture.strip_positions) == 2 * tables.STRIP_WIDTH
    assert picture.panels[0].rows == stage.STAGE_PICTURE["max_rows"]
    assert any("strip shows storage positions 0-47 of 192" in note for note in picture.truncated)


def test_a_tensor_without_elements_still_gets_a_stage():
    """A size of 0 leaves no slice to draw (the fuzzed links found a division by zero here)."""
    for shape in ((2, 0, 3), (0, 4), (3, 0)):
        picture = _picture(shape)
        assert picture.panels == []
        n_cols = stage.stage_columns(picture)
        assert stage.grid_fit(tables.grid_rows(picture, n_cols), tables.strip_rows(picture)).min_px > 0
        assert "<td" not in tables.grid_html(picture, label="x", show="values", caption="c",
                                              n_cols=n_cols)
