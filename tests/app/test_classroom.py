from streamlit.testing.v1 import AppTest


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
