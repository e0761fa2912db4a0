"""Every step of every guided lesson opens its tool in exactly the state it promises."""
import pytest
import torch

from app_pages.navigation import LESSONS_PAGE, TOOLS
from tests.app.apptest import code_blocks, assert_clean, open_page, shown_text
from workbench.common.readme import TABLES
from workbench.lessons.catalog import LESSONS, lesson_by_key, next_lesson

BUILT = {tool.url_path: tool for tool in TOOLS}
TAB_KEYS = {"moons_trainer": "mt_tabs"}   # the key of the page's st.tabs, for a step's `tab`
STEPS = [(lesson, number, step) for lesson in LESSONS for number, step in enumerate(lesson.steps, 1)]


def _schema(tool: str):
    return TABLES[tool]


def _page_text(at) -> str:
    parts = [shown_text(at)]
    parts += [table.value.to_string() for table in at.get("table")]
    parts += [frame.value.to_string() for frame in at.dataframe]
    parts += [chart.proto.spec for chart in at.get("graphviz_chart")]
    return "\n".join(parts)


@pytest.mark.parametrize("lesson,number,step", STEPS,
                         ids=[f"{lesson.key}-{number}" for lesson, number, _ in STEPS])
def test_each_step_link_opens_the_promised_experiment(lesson, number, step):
    at = open_page(BUILT[step.tool].script, query=step.params)
    assert_clean(at)
    assert not [w.value for w in at.warning if "was ignored" in w.value], "a link value was refused"
    schema = _schema(step.tool)
    promised, problems = schema.read(step.params)
    assert problems == []
    opened, _ = schema.read(dict(at.query_params))
    assert opened == promised, "the page published other settings than the link asked for"
    if step.tab:                      # where the step tells the learner to go on that page
        at.session_state[TAB_KEYS[step.tool]] = step.tab
        at.run()
        assert_clean(at)
    if step.pitfall:                  # ...and in the pitfall lab, the pitfall and its run
        at.radio(key="mt_pitfall").set_value(step.pitfall).run()
        at.button(key="mt_pitfall_run").click().run()
        assert_clean(at)
        assert "What happened." in shown_text(at)
    if step.shows is not None:
        assert step.shows() in _page_text(at)


def test_the_lessons_page_walks_forward_and_back():
    at = open_page(LESSONS_PAGE.script, query={"lesson": "tensors"})
    assert_clean(at)
    assert at.query_params.get("lesson", "tensors") == "tensors"
    at.button(key="lesson_next").click().run()
    assert at.query_params["step"] == "2"
    assert "2. Transpose it" in shown_text(at)
    at.button(key="lesson_back").click().run()
    assert at.query_params.get("step", "1") == "1"


def test_a_lesson_check_is_answered_by_pytorch_on_the_page():
    at = open_page(LESSONS_PAGE.script, query={"lesson": "tensors", "step": "2"})
    key = "kc_lesson_tensors_2"
    at.radio(key=f"{key}_choice").set_value("(1, 3)").run()
    at.button(key=f"{key}_commit").click().run()
    assert any("Right" in s.value for s in at.success)


@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.key for lesson in LESSONS])
def test_the_last_step_sums_up_the_lesson_and_links_to_the_next(lesson):
    count = len(lesson.steps)
    at = open_page(LESSONS_PAGE.script, query={"lesson": lesson.key, "step": str(count)})
    assert_clean(at)
    text = shown_text(at)
    assert "What you saw" in text and lesson.takeaway in text
    for number, step in enumerate(lesson.steps, 1):
        assert f"{number}. {step.title}" in text
        if step.check is not None:          # what PyTorch computes now, in this test
            shown = " ".join(step.check.answer().shown_value.split())   # one line, as code spans show it
            assert shown in text
    links = {link.proto.label: link.proto for link in at.get("page_link")}
    after = next_lesson(lesson)
    if after is not None:
        link = links[f"Next lesson: {after.title}"]
        assert link.page == LESSONS_PAGE.url_path
        assert link.query_string == f"lesson={after.key}&step=1"
        opened = open_page(LESSONS_PAGE.script, query={"lesson": after.key, "step": "1"})
        assert f"1. {after.steps[0].title}" in shown_text(opened)
    else:
        assert links[f"Start again: {LESSONS[0].title}"].query_string == f"lesson={LESSONS[0].key}&step=1"


def test_no_summary_before_the_last_step():
    at = open_page(LESSONS_PAGE.script, query={"lesson": "from_scratch", "step": "4"})
    assert_clean(at)
    assert "What you saw" not in shown_text(at)
    assert not [link for link in at.get("page_link") if link.proto.label.startswith("Next lesson")]


def test_a_pitfall_step_says_where_the_experiment_is():
    lesson = lesson_by_key("pitfalls")
    step = lesson.steps[0]
    at = open_page(LESSONS_PAGE.script, query={"lesson": "pitfalls", "step": "1"})
    assert_clean(at)
    assert "**Pitfall lab**" in "\n".join(m.value for m in at.markdown)
    assert f"Pitfall 1: {step.title.split(': ', 1)[1]}" in shown_text(at)


def test_the_device_step_opens_a_facts_table_with_the_tensors_device():
    step = next(s for s in lesson_by_key("tensors").steps if s.title == "Where it lives")
    at = open_page(BUILT[step.tool].script, query=step.params)
    assert_clean(at)
    expected = str(torch.zeros(2, 3).device)       # PyTorch's default device, asked now
    cells = []
    for table in [t.value for t in at.get("table")] + [f.value for f in at.dataframe]:
        if "device" in table.columns:
            cells += [str(v) for v in table["device"]]
        if "fact" in table.columns:
            cells += [str(row.iloc[1]) for _, row in table.iterrows() if row["fact"] == "device"]
    assert expected in cells, "the tensor inspector shows no `device` fact for the tensor"


def test_the_device_pitfall_step_opens_the_labs_error_and_says_what_is_simulated():
    step = next(s for s in lesson_by_key("pitfalls").steps if s.pitfall == "device_mismatch")
    at = open_page(BUILT[step.tool].script, query=step.params)
    at.session_state[TAB_KEYS[step.tool]] = step.tab
    at.run()
    at.radio(key="mt_pitfall").set_value(step.pitfall).run()
    at.button(key="mt_pitfall_run").click().run()
    assert_clean(at)
    text = shown_text(at)
    answer = step.check.answer()                 # the check's own error, computed now
    message = step.shows()                       # PyTorch's error for a CPU layer and that batch
    assert answer.shown_value.endswith(message)
    assert message in code_blocks(at)             # the same message, in the error panel
    if not torch.cuda.is_available():            # no GPU: the page says meta stands in, as the check does
        assert "This server has no GPU" in text and "simulated with `meta`" in text
        assert "`meta`" in answer.explanation


def test_presenter_mode_puts_back_and_next_beside_the_step_and_the_picker_below():
    at = open_page(LESSONS_PAGE.script, query={"present": "1", "lesson": "tensors"})
    assert_clean(at)
    assert "Tensors and their memory: step 1 of 6" in [p.proto.text for p in at.get("progress")]
    at.button(key="lesson_next").click().run()
    assert at.query_params["step"] == "2"
    assert "2. Transpose it" in shown_text(at)
    at.button(key="lesson_back").click().run()
    assert at.query_params.get("step", "1") == "1"
    # The picker, drawn below the step, still changes the lesson and starts it at step 1.
    at.button(key="lesson_next").click().run()
    at.segmented_control(key="lesson_lesson").set_value("autograd").run()
    assert_clean(at)
    assert at.query_params["lesson"] == "autograd"
    assert at.query_params.get("step", "1") == "1"
