from streamlit.testing.v1 import AppTest

from tests.app.apptest import assert_clean


def _page():
    import streamlit as st

    from components.classroom import hidden_controls, visible

    st.write(",".join(sorted(hidden_controls())) or "nothing hidden")
    if visible("batch"):
        st.slider("batch", 1, 64, 8, key="batch")


def test_hide_removes_named_controls_only():
    at = AppTest.from_function(_page)
    at.query_params["hide"] = "batch,Shuffle,../etc"
    at.run()
    assert at.markdown[0].value == "batch,shuffle"
    assert not at.slider


def test_without_hide_every_control_is_drawn():
    at = AppTest.from_function(_page).run()
    assert at.markdown[0].value == "nothing hidden"
    assert at.slider(key="batch").value == 8


def _share_page():
    from dataclasses import dataclass

    import streamlit as st

    from components.classroom import share_panel
    from workbench.common.links import BoolParam, IntParam, LinkSchema

    @dataclass(frozen=True)
    class Demo:
        n: int = 20
        shuffle: bool = True

    schema = LinkSchema(Demo, [IntParam("n", 4, 500), BoolParam("shuffle")])
    url = share_panel(schema=schema, settings=Demo(n=12, shuffle=False), url_path="batch_iterator",
                      script="print('hi')\n", title="Demo", key="demo")
    st.write(f"URL={url}")


def test_share_panel_builds_the_link_with_hidden_controls():
    at = AppTest.from_function(_share_page).run()
    assert at.markdown[-1].value == "URL=/batch_iterator?n=12&shuffle=0"
    at.session_state["demo_panel"] = True       # the learner opens it
    at.run()
    at.checkbox(key="demo_hide_shuffle").check().run()
    at.checkbox(key="demo_present").check().run()
    assert at.markdown[-1].value == "URL=/batch_iterator?n=12&shuffle=0&hide=shuffle&present=1"
    assert_clean(at)


def test_share_panel_runs_only_while_open_and_keeps_its_ticks_while_closed():
    at = AppTest.from_function(_share_page).run()
    assert not at.checkbox and not at.get("download_button")     # closed: nothing sent
    at.session_state["demo_panel"] = True
    at.run()
    at.checkbox(key="demo_hide_shuffle").check().run()
    at.session_state["demo_panel"] = False
    at.run()
    at.run()                        # a second run without the boxes drawn: still remembered
    assert not at.checkbox
    assert at.markdown[-1].value == "URL=/batch_iterator?n=12&shuffle=0&hide=shuffle"
    at.session_state["demo_panel"] = True
    at.run()
    assert at.checkbox(key="demo_hide_shuffle").value is True
    assert at.checkbox(key="demo_hide_n").value is False
    assert_clean(at)


def test_lesson_url_round_trips_a_program():
    from urllib.parse import parse_qs, urlsplit

    from components.classroom import lesson_url

    code = "L = (w*x + b - 10)**2\nprint(L)"
    url = lesson_url("autograd_graph", {"code": code, "backward": "3"}, ["code"])
    assert url.startswith("/autograd_graph?code=L%20%3D%20(w")
    assert parse_qs(urlsplit(url).query) == {"code": [code], "backward": ["3"], "hide": ["code"]}


def _restoring_page():
    from dataclasses import dataclass

    import streamlit as st

    from components.lesson_link import link_settings, publish_link
    from workbench.common.links import IntParam, LinkSchema

    @dataclass(frozen=True)
    class Demo:
        n: int = 20

    schema = LinkSchema(Demo, [IntParam("n", 4, 500)])
    settings, fresh = link_settings(schema, "demo")
    st.write(f"n={settings.n} fresh={fresh}")
    if st.session_state.get("interrupt"):
        st.stop()                        # a run cut short before it publishes its link
    publish_link(schema, "demo", settings)


def test_settings_restored_by_a_bare_link_are_in_the_address_before_the_run_ends():
    """Back by a bare link (the sidebar): the learner's own settings come back, and the URL
    says so even when the run stops before publish_link (it once stayed bare)."""
    at = AppTest.from_function(_restoring_page)
    at.query_params["n"] = "12"
    at.run()
    assert at.markdown[0].value == "n=12 fresh=True"
    at.query_params.clear()
    at.session_state["interrupt"] = True
    at.run()
    assert at.markdown[0].value == "n=12 fresh=True"
    assert at.query_params.get("n") == "12"
    at.run()
    assert at.markdown[0].value == "n=12 fresh=False"
    assert_clean(at)
