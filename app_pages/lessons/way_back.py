"""The way back from a tool to the lesson step that opened it.

A step's *Open this step in the ...* link replaces the lesson in the same tab, and a phone's
sidebar is folded: without a link on the tool page itself the learner has no way back to the
step. The step's link carries `from_lesson=<lesson>.<step>`; the router then draws *Back to
<lesson>, step N* at the top of the tool page.

The origin is also kept per tool page in the session: the tools rewrite their own parameters in
the address (components/lesson_link.py, `publish_link`), and a learner may leave by the sidebar
and come back; the page puts `from_lesson` back into the address, so a reload keeps the way back.
Opening the lessons page ends the detour: the next step's link sets a new origin.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from app_pages.navigation import LESSONS_PAGE, TOOLS

if TYPE_CHECKING:
    from workbench.lessons.catalog import Lesson

FROM_PARAM = "from_lesson"
ORIGINS_KEY = "lesson_way_back"         # session: tool url_path -> (lesson key, step number)
TOOL_PATHS = frozenset(tool.url_path for tool in TOOLS)


def origin_params(lesson: Lesson, number: int) -> dict[str, str]:
    """What a step's tool link adds to its parameters."""
    return {FROM_PARAM: f"{lesson.key}.{number}"}


def parse_origin(raw: str) -> tuple[Lesson, int] | None:
    """`tensors.2` -> (the lesson, 2); None for anything that names no step of a lesson."""
    # Imported here, only for a page opened from a lesson: the router runs this module on
    # every page, and the catalog's checks import scikit-learn (2.2 s of a cold server's
    # first page, python -X importtime).
    from workbench.lessons.catalog import LESSONS

    key, dot, step = raw.strip().partition(".")
    lesson = next((lesson for lesson in LESSONS if lesson.key == key), None)
    if lesson is None or not dot or not step.isdigit():
        return None
    number = int(step)
    return (lesson, number) if 1 <= number <= len(lesson.steps) else None


def back_to_lesson_link(page_path: str) -> None:
    """On a tool page opened from a lesson step: the link back to that step."""
    origins: dict[str, tuple[str, int]] = st.session_state.setdefault(ORIGINS_KEY, {})
    if page_path == LESSONS_PAGE.url_path:
        origins.clear()
        return
    if page_path not in TOOL_PATHS:
        return
    raw = st.query_params.get(FROM_PARAM)
    if raw is not None:
        parsed = parse_origin(raw)
        if parsed is None:              # not a step: nothing to go back to, and not kept
            del st.query_params[FROM_PARAM]
        else:
            origins[page_path] = (parsed[0].key, parsed[1])
    kept = origins.get(page_path)
    origin = parse_origin(f"{kept[0]}.{kept[1]}") if kept else None
    if origin is None:
        return
    lesson, number = origin
    wanted = origin_params(lesson, number)[FROM_PARAM]
    if st.query_params.get(FROM_PARAM) != wanted:
        st.query_params[FROM_PARAM] = wanted
    with st.container(key="lesson_way_back"):
        st.page_link(LESSONS_PAGE.script, label=f"Back to {lesson.title}, step {number}",
                     icon=":material/arrow_back:",
                     query_params={"lesson": lesson.key, "step": str(number)},
                     help=f"The lesson step that opened this page: "
                          f"{number}. {lesson.steps[number - 1].title}")
