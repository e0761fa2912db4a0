"""The router's guard: a page that raises shows the error panel, never a traceback."""
from streamlit.testing.v1 import AppTest

from tests.app.apptest import code_blocks, assert_clean


def _raising_page():
    import streamlit as st

    from components.guard import run_guarded

    def page():
        st.write("before the failure")
        raise ValueError("boom from a page")

    run_guarded(page, "raising page")
    st.write("the app is still alive")


def test_a_raising_page_shows_the_error_panel_not_a_traceback():
    at = AppTest.from_function(_raising_page).run()
    assert not at.exception
    assert any("unexpected error" in e.value for e in at.error)
    assert any("boom from a page" in c for c in code_blocks(at))
    assert not any("Traceback" in c for c in code_blocks(at))
    assert any("still alive" in m.value for m in at.markdown)


def _stopping_page():
    import streamlit as st

    from components.guard import run_guarded

    def page():
        st.write("stopped here")
        st.stop()

    run_guarded(page, "stopping page")
    st.write("never drawn")


def test_the_guard_lets_st_stop_through():
    at = AppTest.from_function(_stopping_page).run()
    assert_clean(at)
    assert not at.error
    texts = [m.value for m in at.markdown]
    assert "stopped here" in texts and "never drawn" not in texts
