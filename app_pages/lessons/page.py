"""Guided lessons: step by step through the tools, each step a lesson link and a check."""
import dataclasses

import streamlit as st

from components.classroom import app_root, lesson_url
from components.figures import prose
from components.knowledge_check import knowledge_check
from components.lesson_link import link_settings, publish_link
from components.navigation import LESSONS_PAGE, TOOLS
from workbench.lessons.catalog import LESSONS, lesson_schema

SCHEMA = lesson_schema()
SCRIPTS = {tool.url_path: tool for tool in TOOLS}

st.title("Guided lessons")
prose("Short walks through the workbench, in the order of the course. Each step opens a tool "
      "with exactly the right experiment; answer its question before you move on.")

available = [lesson for lesson in LESSONS if SCRIPTS[lesson.tool].built]
if not available:
    st.info("Lessons appear here as their tools are built.", icon=":material/construction:")
    st.stop()

settings, fresh = link_settings(SCHEMA, "lessons")
keys = [lesson.key for lesson in available]
if fresh or st.session_state.get("lesson_choice") not in keys:
    st.session_state["lesson_choice"] = settings.lesson if settings.lesson in keys else keys[0]
    st.session_state["lesson_step"] = settings.step

titles = {lesson.key: lesson.title for lesson in available}
choice = st.segmented_control("Lesson", keys, format_func=titles.get, key="lesson_choice",
                              on_change=lambda: st.session_state.update(lesson_step=1))
lesson = next(lesson for lesson in available if lesson.key == (choice or keys[0]))
count = len(lesson.steps)
number = min(max(int(st.session_state.get("lesson_step", 1)), 1), count)
st.session_state["lesson_step"] = number
step = lesson.steps[number - 1]
publish_link(SCHEMA, "lessons", dataclasses.replace(settings, lesson=lesson.key, step=number))

st.caption(lesson.summary)
with st.container(border=True, key=LESSONS_PAGE.main_key):
    st.progress(number / count, text=f"Step {number} of {count}")
    st.subheader(f"{number}. {step.title}")
    st.markdown(step.text)
    tool = SCRIPTS[step.tool]
    st.page_link(tool.script, label=f"Open this step in the {tool.title.lower()}", icon=tool.icon,
                 query_params=step.params)
    if "code" in step.params:
        st.code(step.params["code"], language="python")
    st.caption("The lesson link of this step, for a slide:")
    st.code(lesson_url(step.tool, step.params, root=app_root()), language="text", wrap_lines=True)
    if step.check is not None:
        knowledge_check(f"lesson_{lesson.key}_{number}", step.check.question, step.check.options,
                        step.check.answer)

back, _, forward = st.columns([1, 4, 1])
back.button("Back", icon=":material/arrow_back:", disabled=number == 1, key="lesson_back",
            on_click=lambda: st.session_state.update(lesson_step=number - 1), width="stretch")
forward.button("Next", icon=":material/arrow_forward:", disabled=number == count, key="lesson_next",
               on_click=lambda: st.session_state.update(lesson_step=number + 1), width="stretch")
