"""A tool opened from a lesson step shows the way back to that step (issue 43, item 4)."""
from __future__ import annotations

from urllib.parse import parse_qsl

from app_pages.lessons.way_back import FROM_PARAM
from app_pages.navigation import LESSONS_PAGE, TOOLS
from tests.app.apptest import assert_clean, open_page
from workbench.lessons.catalog import lesson_by_key

BUILT = {tool.url_path: tool for tool in TOOLS}
LESSON = lesson_by_key("training")
NUMBER = next(n for n, step in enumerate(LESSON.steps, 1) if step.tool == "moons_trainer")
STEP = LESSON.steps[NUMBER - 1]
BACK = f"Back to {LESSON.title}, step {NUMBER}"


def _links(at) -> dict[str, object]:
    return {link.proto.label: link.proto for link in at.get("page_link")}


def _sidebar_to(at, script: str) -> None:
    for name in list(at.query_params):
        del at.query_params[name]
    at.switch_page(script).run()


def _tool(query: dict[str, str]):
    at = open_page(BUILT[STEP.tool].script, query=query)
    assert_clean(at)
    return at


def test_the_steps_link_names_the_step_it_comes_from():
    at = open_page(LESSONS_PAGE.script, query={"lesson": LESSON.key, "step": str(NUMBER)})
    assert_clean(at)
    link = next(p for label, p in _links(at).items() if label.startswith("Open this step"))
    assert link.page == STEP.tool
    query = dict(parse_qsl(link.query_string, keep_blank_values=True))
    assert query[FROM_PARAM] == f"{LESSON.key}.{NUMBER}"
    assert {k: query[k] for k in STEP.params} == STEP.params


def test_the_tool_page_links_back_to_the_step_through_its_own_link_rewriting():
    at = _tool({**STEP.params, FROM_PARAM: f"{LESSON.key}.{NUMBER}"})
    back = _links(at)[BACK]
    assert back.page == LESSONS_PAGE.url_path
    assert back.query_string == f"lesson={LESSON.key}&step={NUMBER}"
    # The page rewrites its own settings in the address: the way back stays.
    at.selectbox(key="mt_act").select("GELU").run()
    assert_clean(at)
    assert at.query_params["act"] == "GELU"
    assert at.query_params[FROM_PARAM] == f"{LESSON.key}.{NUMBER}"
    assert BACK in _links(at)
    # Away by the sidebar and back by a bare link (the sidebar's links carry no parameters;
    # AppTest's switch_page keeps them): the session remembers the step.
    _sidebar_to(at, BUILT["tensor_inspector"].script)
    assert BACK not in _links(at), "only on the page the step opened"
    _sidebar_to(at, BUILT[STEP.tool].script)
    assert_clean(at)
    assert BACK in _links(at)
    assert at.query_params[FROM_PARAM] == f"{LESSON.key}.{NUMBER}"
    # Back at the lessons, the detour is over.
    _sidebar_to(at, LESSONS_PAGE.script)
    _sidebar_to(at, BUILT[STEP.tool].script)
    assert_clean(at)
    assert BACK not in _links(at)


def test_a_tool_opened_by_itself_or_with_a_bad_origin_has_no_way_back():
    assert not [label for label in _links(_tool(STEP.params)) if label.startswith("Back to")]
    for bad in ("nolesson.1", f"{LESSON.key}.99", f"{LESSON.key}", f"{LESSON.key}.x"):
        at = _tool({**STEP.params, FROM_PARAM: bad})
        assert not [label for label in _links(at) if label.startswith("Back to")], bad
        assert FROM_PARAM not in at.query_params, bad
