"""SettingsForm draws a tool's widgets from its table, honours hide= and keeps the last good text."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest


def form_app():
    from dataclasses import dataclass

    import streamlit as st

    from components.lesson_link import link_settings, publish_link
    from components.settings_form import SettingsForm
    from workbench.common.links import ChoiceParam, FloatParam, IntListParam, IntParam, LinkSchema, Widget

    @dataclass(frozen=True)
    class Demo:
        n: int = 20
        lr: float = 0.003
        act: str = "ReLU"
        hidden: tuple[int, ...] = (64, 32)

    table = LinkSchema(Demo, [
        IntParam("n", 4, 500, label="Samples", help="How many samples."),
        FloatParam("lr", 1e-5, 1.0, label="Learning rate", help="Step size.",
                   widget=Widget("number", step=0.001, format="%.5f")),
        ChoiceParam("act", ["ReLU", "Tanh"], label="Activation", help="Between layers.",
                    widget=Widget("radio", choice_labels={"ReLU": "ReLU (max(0, x))"})),
        IntListParam("hidden", 1, 256, 4, empty_ok=True, label="Hidden layers", help="Widths."),
    ])
    linked, fresh = link_settings(table, "demo")
    form = SettingsForm(table, linked, fresh, prefix="demo_")
    if st.session_state.pop("drop_hidden", False):
        # As Streamlit may between the page's run and a fragment's rerun, where the form made
        # by the page run draws the widget again.
        del st.session_state["demo_hidden"]
    form.draw("n", "lr", "act", "hidden")
    settings = form.settings()
    publish_link(table, "demo", settings)
    st.write(f"settings={settings}")


def _run(**query) -> AppTest:
    at = AppTest.from_function(form_app, default_timeout=30)
    for name, value in query.items():
        at.query_params[name] = value
    return at.run()


def _shown(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("settings="))


def test_widgets_follow_the_table():
    at = _run()
    assert [n.label for n in at.number_input] == ["Samples", "Learning rate"]
    assert at.number_input(key="demo_n").min == 4 and at.number_input(key="demo_n").max == 500
    assert at.number_input(key="demo_n").help == "How many samples."
    assert at.number_input(key="demo_lr").step == 0.001
    assert at.radio(key="demo_act").options == ["ReLU (max(0, x))", "Tanh"]
    assert at.text_input(key="demo_hidden").value == "64,32"
    assert "hidden=(64, 32)" in _shown(at)


def test_a_link_seeds_the_widgets_and_a_hidden_control_keeps_the_links_value():
    at = _run(n="100", act="tanh", hide="act")
    assert at.number_input(key="demo_n").value == 100
    assert not at.radio and "act='Tanh'" in _shown(at)
    assert at.query_params["act"] == "Tanh"


def test_bad_text_is_reported_and_the_last_good_value_stays():
    at = _run()
    at.text_input(key="demo_hidden").input("32,16").run()
    assert "hidden=(32, 16)" in _shown(at)
    at.text_input(key="demo_hidden").input("32,abc").run()
    assert "hidden=(32, 16)" in _shown(at)
    assert any("Still using" in e.value and "32,16" in e.value for e in at.error)
    assert at.query_params["hidden"] == "32,16"


def test_a_widget_change_reaches_the_settings_and_the_url():
    at = _run()
    at.number_input(key="demo_lr").set_value(0.01).run()
    assert "lr=0.01" in _shown(at)
    assert at.query_params["lr"] == "0.01"


def test_a_bare_url_restores_the_learners_own_settings_and_rewrites_the_url():
    at = _run(n="100")
    at.number_input(key="demo_lr").set_value(0.01).run()
    for name in list(at.query_params):
        del at.query_params[name]          # back by the sidebar: a URL without parameters
    at.run()
    assert "n=100" in _shown(at) and "lr=0.01" in _shown(at)
    assert at.number_input(key="demo_n").value == 100
    assert at.query_params["n"] == "100" and at.query_params["lr"] == "0.01"


def test_a_link_that_names_parameters_still_applies_them():
    at = _run(n="100")
    at.query_params["n"] = "50"
    at.run()
    assert "n=50" in _shown(at)


def test_a_text_widget_whose_state_streamlit_dropped_keeps_the_last_good_value():
    at = _run()
    at.text_input(key="demo_hidden").input("32,16").run()
    at.session_state["drop_hidden"] = True
    at.run()
    assert at.text_input(key="demo_hidden").value == "32,16"
    assert "hidden=(32, 16)" in _shown(at) and at.query_params["hidden"] == "32,16"


def test_every_run_tells_the_browser_each_widgets_value():
    """Not only the run that seeded a widget: a browser that first draws the widget from a later
    run's message would otherwise start it at its default (a link's 100 samples at 4, a typed
    shape at "") and send that back with the next click."""
    at = _run(n="100", hidden="8")
    at.text_input(key="demo_hidden").input("32,16").run()
    at.run()                                   # nothing changed: the run after the seeding one
    for widget, value in ((at.number_input(key="demo_n"), 100.0),
                          (at.number_input(key="demo_lr"), 0.003),
                          (at.text_input(key="demo_hidden"), "32,16")):
        assert widget.proto.set_value and widget.proto.value == value, widget.key
    assert at.radio(key="demo_act").proto.set_value
