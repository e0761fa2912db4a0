"""Sizes of presenter mode's stage in the Tensor inspector (app_pages/tensor_inspector/stage.py):
how tall the grid may be, how many slices side by side, and labels that fit their cells."""
from __future__ import annotations

import math

import pytest
from app_pages.tensor_inspector import figures, stage
from components.figures import PRESENTER_SCALE
from workbench.tensors.layout import layout_picture
from workbench.tensors.report import inspect
from workbench.tensors.settings import TensorSettings


@pytest.fixture
def presenting(monkeypatch):
    monkeypatch.setattr(figures, "graph_scale", lambda: PRESENTER_SCALE)


def _picture(shape: tuple[int, ...], **limits):
    """The picture of x itself, as the page draws it."""
    report = inspect(TensorSettings(shape=shape))
    return layout_picture(report.result, colour_max=report.views[0].facts.numel - 1, **limits)


def test_the_grid_gets_the_viewport_less_what_sits_above_and_below_it():
    fit = stage.grid_fit((396, 264), strip_height=121)
    assert fit.leave_px == stage.ABOVE_GRID_PX + stage.AROUND_STRIP_PX + 121
    assert fit.min_px < 264 < fit.max_px
    assert fit.aspect == pytest.approx(1.5)
    assert fit.height_css() == (f"min({fit.max_px}px, max({fit.min_px}px, "
                                f"calc(100vh - {fit.leave_px}px)))")
    assert fit.width_css() == f"calc({fit.height_css()} * 1.500)"
    # Rows squeezed to MIN_SHRINK of their height, the fixed margins kept.
    assert fit.min_px == round(stage.GRID_FIXED_PX + (264 - stage.GRID_FIXED_PX) * stage.MIN_SHRINK)
    # At 1280x720 a 4x4 grid over a one-row strip gets more than its drawn height.
    assert 720 - fit.leave_px > 264


def test_slices_go_side_by_side_as_the_stage_box_asks(presenting):
    picture = _picture((4, 2, 3))             # four 2x3 slices
    chosen = stage.stage_columns(picture)

    def mismatch(n):
        w, h = figures.grid_size(picture, n)
        return abs(math.log(w / h / stage.STAGE_ASPECT))
    assert all(mismatch(chosen) <= mismatch(n) for n in range(1, 5))
    assert 1 < chosen < 4                     # neither one tall column nor one long row
    assert stage.stage_columns(_picture((4, 6))) == 1


def test_labels_fit_the_narrowest_cell_the_stage_draws(presenting):
    picture = _picture((12, 16), **stage.STAGE_PICTURE)
    n_cols = stage.stage_columns(picture)
    narrowest = stage.narrowest_cell_px(picture, n_cols)
    assert narrowest <= figures.cell_width() * stage.MIN_SHRINK
    for label in ("7", "191", "123456", "100000001"):
        size = figures._text_size([[label]], 13, narrowest)
        assert size * 0.6 * len(label) + 6 <= narrowest + 1 or size == 8, (label, size)
    # Short labels keep the presenter size: 1.5x the normal 13 px.
    assert figures._text_size([["191"]], 13, narrowest) == round(13 * PRESENTER_SCALE)


def test_labels_outside_the_stage_keep_their_size():
    cells = [["0", "100000001"]]
    assert figures._text_size(cells, 13) == round(13 * 0.65)
    assert figures._text_size(cells, 13, figures.cell_width()) == round(13 * 0.65)


def test_the_stage_draws_two_rows_of_storage_and_says_so():
    picture = _picture((12, 16), **stage.STAGE_PICTURE)
    assert len(picture.strip_positions) == 2 * figures.STRIP_WIDTH
    assert picture.panels[0].rows == stage.STAGE_PICTURE["max_rows"]
    assert any("strip shows storage positions 0-47 of 192" in note for note in picture.truncated)
