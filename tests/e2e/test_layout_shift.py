"""Nothing jumps on the moons trainer (issue 43, item 3): what a run's end and *Draw on these
points* add has its place, so Chromium's layout shift (the `layout-shift` entries without recent
input, harness/layout_shift.py) stays within 0.1 and the live view itself does not move.

Layout assertions, not timings: each waits for the state it checks (the run finished and its
page drawn; the drawing on screen). bench/layout_shift.py prints the same figures."""
from __future__ import annotations

import pytest

from harness.layout_shift import LIMIT, draw_on_these, play_to_finish

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("case", [play_to_finish, draw_on_these], ids=["play_to_finish", "draw"])
def test_the_moons_view_does_not_jump(browser, app_url, case):
    shift = case(browser, app_url)
    assert shift.total <= LIMIT, shift.describe()
    # The end note and the replay slider (a run's end), the drawing's help (Draw) are placed
    # under the view: the view did not move at all (it moved 151 px and 106 px before).
    assert shift.view_moved < 1, shift.describe()
