"""Guided lessons: step by step through the tools, each step a lesson link and a check."""
import streamlit as st

from app_pages.lessons.way_back import origin_params
from app_pages.navigation import LESSONS_PAGE, TOOLS
from components.classroom import app_root, lesson_url
from components.code_block import code_block, link_block
from components.figures import presenting
from components.keyboard import skip_to_controls, with_shortcut
from components.knowledge_check import knowledge_check
from components.lesson_link import link_settings, publish_link
from components.plain_text import code_span, md
from components.settings_form import SettingsForm
from components.stage import page_header
from workbench.lessons.catalog import LESSONS, Lesson, Step, lesson_by_key, next_lesson, pitfall_title
from workbench.lessons.settings import TABLE

KEY = "lessons"
SCRIPTS = {tool.url_path: tool for tool in TOOLS}


def go_to(step: int) -> None:
    st.session_state[form.key("step")] = step


def new_lesson() -> None:
    st.session_state[form.key("step")] = 1


def where_on_the_page(step: Step) -> str:
    """Where the experiment is on the opened page, when the link alone cannot get there."""
    if not step.tab:
        return ""
    text = f":material/tab: On that page, open the **{md(step.tab)}** tab"
    if step.pitfall:
        text += f", pick **{md(pitfall_title(step.pitfall))}** and press **Run both side by side**"
    return text + "."


def what_pytorch_showed(lesson_key: str) -> list[tuple[str, str]]:
    """Each step's title and what its check's function printed, computed by PyTorch now."""
    found = lesson_by_key(lesson_key)
    return [(f"{n}. {s.title}", s.check.answer().shown_value if s.check is not None else "")
            for n, s in enumerate(found.steps, 1)]


def lesson_summary(lesson: Lesson) -> None:
    """After the last step: what the learner saw, and the way on to the next lesson."""
    with st.container(border=True, key="lesson_summary"):
        st.subheader("What you saw")
        st.markdown(lesson.takeaway)
        with st.expander("Each step, as PyTorch computed it (reveals the checks' answers)",
                         icon=":material/checklist:"):
            for title, shown in what_pytorch_showed(lesson.key):
                st.markdown(f"**{title}**" + (f": {code_span(shown)}" if shown else ""))
        after = next_lesson(lesson)
        if after is not None:
            st.page_link(LESSONS_PAGE.script, label=f"Next lesson: {after.title}",
                         icon=":material/arrow_forward:",
                         query_params={"lesson": after.key, "step": "1"})
        else:
            first = LESSONS[0]
            st.markdown("This was the last lesson.")
            st.page_link(LESSONS_PAGE.script, label=f"Start again: {first.title}",
                         icon=":material/replay:", query_params={"lesson": first.key, "step": "1"})


page_header("Guided lessons",
            "Short walks through the workbench, in the order of the course. Each step opens a tool "
            "with exactly the right experiment; answer its question before you move on.")

# --- settings: which lesson and step (from a link, or this learner's own when they come back)
# In presenter mode the projected first screen goes to the step (its text, its link, its check
# and Back/Next); the lesson picker and the lesson's summary follow below it. The places are
# made now and filled in the order the settings need: the picker first.
if presenting():
    stage, picker = st.container(), st.container()
else:
    stage = picker = st.container()
linked, fresh = link_settings(TABLE, KEY)
form = SettingsForm(TABLE, linked, fresh, prefix="lesson_")
with picker:
    lesson_key = form.value("lesson", on_change=new_lesson)
lesson = lesson_by_key(lesson_key)
count = len(lesson.steps)
number = min(max(int(st.session_state[form.key("step")]), 1), count)
settings = form.settings(lesson=lesson.key, step=number)
publish_link(TABLE, KEY, settings)
step = lesson.steps[number - 1]


def step_buttons(back, forward, width: str = "stretch") -> None:
    back.button("Back", icon=":material/arrow_back:", disabled=number == 1, key="lesson_back",
                on_click=go_to, args=(number - 1,), width=width, shortcut="B",
                help=with_shortcut("The previous step", "B"))
    forward.button("Next", icon=":material/arrow_forward:", disabled=number == count,
                   key="lesson_next", on_click=go_to, args=(number + 1,), width=width, shortcut="N",
                   help=with_shortcut("The next step", "N"))


def step_link(step: Step) -> None:
    """The link that opens the step's experiment, and where on that page to look."""
    tool = SCRIPTS[step.tool]
    st.page_link(tool.script, label=f"Open this step in the {tool.title.lower()}",
                 icon=tool.icon, query_params={**step.params, **origin_params(lesson, number)})
    where = where_on_the_page(step)
    if where:
        st.markdown(where)
    if "code" in step.params:
        code_block(step.params["code"], language="python")


def slide_link(step: Step) -> None:
    st.caption("The lesson link of this step, for a slide:")
    link_block(lesson_url(step.tool, step.params, root=app_root()))


def step_text(step: Step) -> None:
    with st.container(key="lesson_step_text"):
        st.markdown(step.text)


def step_check(step: Step) -> None:
    if step.check is not None:
        knowledge_check(step.check, key=f"lesson_{lesson.key}_{number}")


# A projected step's title, smaller than a subheader at 1.4x: the step's longest titles then
# take at most two short lines, and the check below them stays on the first screen.
# The "Open this step" link's label wraps rather than ending in an ellipsis in a narrow column.
PRESENTER_CSS = f"""<style>
.st-key-{LESSONS_PAGE.main_key} h3 {{ font-size: 1.2rem; padding: 0; line-height: 1.3; }}
.st-key-{LESSONS_PAGE.main_key} [data-testid="stPageLink-NavLink"] > span,
.st-key-{LESSONS_PAGE.main_key} [data-testid="stPageLink-NavLink"] > span * {{
  white-space: normal; overflow: visible; text-overflow: clip; line-height: 1.3;
}}
</style>"""

# --- draw
skip_to_controls("lesson_next", "lesson_back")      # the step buttons
if presenting():
    st.html(PRESENTER_CSS)
    with stage, st.container(border=True, key=LESSONS_PAGE.main_key):
        # The step's title between Back and Next, so that the text and the check start high;
        # the buttons as wide as their labels (a column would cut "Back" with the sidebar open).
        with st.container(horizontal=True, vertical_alignment="center", gap="medium"):
            back, title, forward = (st.container(width="content"), st.container(),
                                    st.container(width="content"))
        step_buttons(back, forward, width="content")
        with title:
            st.subheader(f"{number}. {step.title}")
            st.progress(number / count, text=f"{lesson.title}: step {number} of {count}")
        # The step on the left, its check on the right, the wider: a long question and its
        # options then take fewer lines, and both fit the projected first screen.
        text_column, check_column = st.columns([2, 3], gap="large")
        with text_column:
            step_text(step)
            step_link(step)
        with check_column:
            step_check(step)
        slide_link(step)
    if number == count:
        with stage:
            lesson_summary(lesson)
    with picker:
        st.caption(lesson.summary)
else:
    st.caption(lesson.summary)
    with st.container(border=True, key=LESSONS_PAGE.main_key):
        st.progress(number / count, text=f"Step {number} of {count}")
        st.subheader(f"{number}. {step.title}")
        step_text(step)
        step_link(step)
        slide_link(step)
        step_check(step)

    if number == count:
        lesson_summary(lesson)

    back, _, forward = st.columns([1, 4, 1])
    step_buttons(back, forward)
