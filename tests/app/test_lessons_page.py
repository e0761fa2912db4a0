"""Every step of every guided lesson opens its tool in exactly the state it promises."""
import importlib

import pytest

from components.navigation import LESSONS_PAGE, TOOLS
from tests.app.apptest import open_page, shown_text
from workbench.lessons.catalog import LESSONS

SCHEMAS = {
    "tensor_inspector": ("workbench.tensors.report", "LINK_SCHEMA"),
    "autograd_graph": ("workbench.autograd.session", "SCHEMA"),
    "batch_iterator": ("workbench.batches.loader", "LINK_SCHEMA"),
    "moons_trainer": ("workbench.moons.settings", "TABLE"),
}
BUILT = {tool.url_path: tool for tool in TOOLS if tool.built}
STEPS = [(lesson, number, step) for lesson in LESSONS for number, step in enumerate(lesson.steps, 1)
         if step.tool in BUILT]


def _schema(tool: str):
    module, name = SCHEMAS[tool]
    return getattr(importlib.import_module(module), name)


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
    assert not at.exception
    assert not [w.value for w in at.warning if "was ignored" in w.value], "a link value was refused"
    schema = _schema(step.tool)
    promised, problems = schema.read(step.params)
    assert problems == []
    opened, _ = schema.read(dict(at.query_params))
    assert opened == promised, "the page published other settings than the link asked for"
    if step.shows is not None:
        assert step.shows() in _page_text(at)


def test_the_lessons_page_walks_forward_and_back():
    if not BUILT:
        pytest.skip("no tool built yet")
    at = open_page(LESSONS_PAGE.script, query={"lesson": "tensors"})
    assert not at.exception
    assert at.query_params.get("lesson", "tensors") == "tensors"
    at.button(key="lesson_next").click().run()
    assert at.query_params["step"] == "2"
    assert "2. Transpose it" in shown_text(at)
    at.button(key="lesson_back").click().run()
    assert at.query_params.get("step", "1") == "1"


def test_a_lesson_check_is_answered_by_pytorch_on_the_page():
    if "tensor_inspector" not in BUILT:
        pytest.skip("tensor inspector not built")
    at = open_page(LESSONS_PAGE.script, query={"lesson": "tensors", "step": "2"})
    key = "kc_lesson_tensors_2"
    at.radio(key=f"{key}_choice").set_value("(1, 3)").run()
    at.button(key=f"{key}_commit").click().run()
    assert any("Right" in s.value for s in at.success)
