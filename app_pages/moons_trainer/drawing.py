"""Drawn data (dataset `drawn`, "Your own points"): the learner clicks points onto the live
view's plane (static/live/draw.js), and they become the `points` setting like any other.

The view sends the whole drawing, as its link writes it, each time it changes. The callback
keeps it in the learner's state; the page's next full run puts it into the settings form
(`take_drawn_points`), so the address bar, the share link, the run and the code panel follow as
they do for a widget. Until each class has enough points to split, there is no run: the view
shows the drawing alone and the page says how many more points it needs (`drawing_panel`).
What changes while the learner draws is written below the plane, so that the plane stays put
under the pointer.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.moons_trainer.live_canvas import KEY as LIVE_KEY
from app_pages.moons_trainer.state import MoonsTrainerState, state
from components.classroom import visible
from components.figures import presenting
from components.settings_form import SettingsForm
from workbench.common.links import MAX_RAW_LENGTH
from workbench.moons_trainer.data import drawn_minimum, drawn_shortfall
from workbench.moons_trainer.settings import TABLE, MoonsSettings, points_words

POINTS = TABLE["points"]


def points_sent() -> None:
    """The live view's callback: the learner changed the drawing. What it sent is untrusted like
    a link's value: read by the settings table, and dropped if the table refuses it."""
    result = st.session_state.get(LIVE_KEY)
    text = result.get("points") if result is not None else None
    if not isinstance(text, str) or len(text) > MAX_RAW_LENGTH or not visible("points"):
        return
    try:
        state().drawn_request = POINTS.parse(text)
    except ValueError:
        return


def take_drawn_points(me: MoonsTrainerState, form: SettingsForm[MoonsSettings]) -> None:
    """Put the points the view sent into the settings form (before the settings are read)."""
    if me.drawn_request is None:
        return
    points, me.drawn_request = me.drawn_request, None
    me.notice = "" if me.notice_kind == "refused" else me.notice
    form.change({"points": points})


def drawing_help(settings: MoonsSettings) -> None:
    """Under the live view, the same while the learner draws (the plane must not move under the
    pointer, nor when *Draw on these points* starts the drawing): how to draw. Not in presenter
    mode, where the plane needs the first screen's
    room (the tools above it and its description say how to draw as well)."""
    if presenting():
        return
    if not visible("points"):
        st.caption("**Points drawn by the link's author.** This link fixes them.")
        return
    st.caption(
        "**Your own points.** Pick a class above the plane, then click the plane to add a point "
        "of it; click a point to remove it (Shift+click adds one even there). By keyboard: focus "
        "the plane, move its cursor with the arrow keys, press Enter to add a point there and "
        f"Delete to remove one. At most {POINTS.max_points} points, "
        f"{drawn_minimum(settings.fractions)} or more of each class to train; they travel in the "
        "page's link.")


def drawing_panel(settings: MoonsSettings, shortfall: str | None) -> None:
    """Below the live view: why there is no run yet, if there is none, and what is drawn (per
    class, and every point in a table a screen reader or Ctrl+F can read)."""
    with st.container(key="mt_drawing"):
        if shortfall is not None:
            st.warning(shortfall, icon=":material/draw:")
        with st.expander(f"Drawn points: {points_words(settings.points)}",
                         icon=":material/table_rows:"):
            if settings.points:
                table = pd.DataFrame(settings.points, columns=["x₁", "x₂", "class"])
                table.index = range(1, len(table) + 1)
                st.table(table.style.format({"x₁": "{:g}", "x₂": "{:g}"}))
            else:
                st.markdown("No points yet.")


def board(me: MoonsTrainerState, settings: MoonsSettings) -> str | None:
    """Whether the page shows the drawing alone, with no run: the reason (drawn points too few to
    split), or None. The live view reads `me.board` (live.py)."""
    shortfall = drawn_shortfall(settings.points, settings.fractions) if settings.drawn else None
    if shortfall is None:
        me.board = None
        return None
    counts = [sum(1 for point in settings.points if point[2] == c) for c in (0, 1)]
    me.board = (settings, f"No run yet: {counts[0]} of class 0 and {counts[1]} of class 1 drawn; "
                          f"each class needs {drawn_minimum(settings.fractions)} to train.")
    return shortfall
