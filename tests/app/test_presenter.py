import json

from streamlit.testing.v1 import AppTest

from tests.app.apptest import assert_clean, open_page


def _figure_page():
    import plotly.graph_objects as go
    import streamlit as st

    from components.figures import PLOTLY_CONFIG, style_figure

    fig = go.Figure(go.Scatter(x=[0, 1], y=[1, 0], mode="lines+markers", marker={"size": 8}))
    st.plotly_chart(style_figure(fig, uirevision="fixed"), key="demo", config=PLOTLY_CONFIG)


def _spec(at):
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def test_presenter_mode_enlarges_fonts_lines_and_markers():
    normal = AppTest.from_function(_figure_page).run()
    presenting = AppTest.from_function(_figure_page)
    presenting.session_state["presenter_mode"] = True
    presenting.run()
    a, b = _spec(normal), _spec(presenting)
    assert b["layout"]["font"]["size"] >= 1.4 * a["layout"]["font"]["size"]
    assert b["data"][0]["marker"]["size"] > a["data"][0]["marker"]["size"]
    assert b["data"][0]["line"]["width"] > a["data"][0].get("line", {}).get("width", 2)
    assert a["layout"]["uirevision"] == "fixed"


def test_present_in_the_url_turns_presenter_mode_on():
    at = open_page(query={"present": "1"})
    assert at.toggle(key="presenter_mode").value is True
    assert_clean(at)
    at = open_page(query={"present": "perhaps"})
    assert at.toggle(key="presenter_mode").value is False
    assert any("present=perhaps" in str(getattr(e, "value", "")) for e in at.sidebar)


def test_the_explanations_fold_on_every_tool_page_and_in_presenter_mode_everywhere():
    """A tool page's first screen goes to its figure in every layout (issue 43): its
    explanation folds beside the title; the other pages fold it only on a projector."""
    from app_pages.navigation import all_pages
    from workbench.tools import TOOLS

    tool_scripts = {tool.script for tool in TOOLS}
    for page in all_pages():
        at = open_page(page.script, query={"present": "1"})
        assert_clean(at, page.script)
        assert "About this page" in [e.label for e in at.expander], page.script
        normal = open_page(page.script)
        assert_clean(normal, page.script)
        folded = "About this page" in [e.label for e in normal.expander]
        assert folded == (page.script in tool_scripts), page.script
