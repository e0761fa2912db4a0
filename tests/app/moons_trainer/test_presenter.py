"""The moons trainer in presenter mode (AppTest): the live view sizes itself from the browser's
viewport, the settings follow it with the same widgets, and the tabs' Plotly figures grow and
keep their legend off the axis titles."""
from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from tests.app.apptest import assert_clean, live_view, open_page

PAGE = "app_pages/moons_trainer/page.py"
QUICK = {"n": "300", "epochs": "3"}


def test_presenter_mode_hands_the_viewport_to_the_live_view_and_keeps_every_setting():
    normal = open_page(PAGE, QUICK)
    presented = open_page(PAGE, {**QUICK, "present": "1"})
    assert_clean(presented)
    normal_scene, presented_scene = live_view(normal)[0]["scene"], live_view(presented)[0]["scene"]
    assert normal_scene["fit_viewport"] is False and normal_scene["scale"] == 1.0
    assert presented_scene["fit_viewport"] is True and presented_scene["scale"] >= 1.4
    # The same widgets under the same keys, below the live view instead of beside it.
    widget_keys = {"mt_dataset", "mt_n", "mt_noise", "mt_split", "mt_seed", "mt_hidden", "mt_act",
                   "mt_dropout", "mt_opt", "mt_lr", "mt_wd", "mt_batch", "mt_epochs"}
    for at in (normal, presented):
        shown = {w.key for kind in ("selectbox", "number_input", "slider", "text_input")
                 for w in at.get(kind)}
        assert widget_keys <= shown, widget_keys - shown
    assert "Settings" in [h.value for h in presented.subheader]
    assert "Settings" not in [h.value for h in normal.subheader]


def test_a_setting_changed_in_presenter_mode_reaches_the_run():
    at = open_page(PAGE, {**QUICK, "present": "1"})
    at.number_input(key="mt_n").set_value(400).run()
    assert_clean(at)
    assert at.session_state["learner::moons_trainer"].session.settings.n == 400
    assert live_view(at)[0]["frame"]["status"].startswith("Epoch 0 / 3")


def _staged_figure_page():
    import plotly.graph_objects as go
    import streamlit as st
    from plotly.subplots import make_subplots

    from components.figures import staged

    fig = make_subplots(rows=1, cols=2, subplot_titles=("left", "right"))
    fig.add_trace(go.Scatter(x=[0, 1], y=[1, 0], name="a"), row=1, col=1)
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], name="b"), row=1, col=2)
    fig.update_xaxes(title_text="epoch")
    st.plotly_chart(staged(fig, 280), key="staged")


def _staged_spec(presenting: bool) -> dict:
    at = AppTest.from_function(_staged_figure_page)
    at.session_state["presenter_mode"] = presenting
    at.run()
    assert not at.exception
    return json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]


def test_staged_figures_grow_in_presenter_mode_with_the_legend_under_the_axis_title():
    normal, presented = _staged_spec(False), _staged_spec(True)
    assert normal["height"] == 280 and presented["height"] >= 1.4 * 280
    for layout in (normal, presented):
        # Measured from the figure's bottom edge, not as a fraction of the plot's height.
        assert layout["legend"]["yref"] == "container" and layout["legend"]["y"] == 0
        assert layout["legend"]["yanchor"] == "bottom" and layout["legend"]["orientation"] == "h"
    titles = [a["font"]["size"] for a in presented["annotations"]]
    assert titles and min(titles) >= 1.4 * max(a["font"]["size"] for a in normal["annotations"])
