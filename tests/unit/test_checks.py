"""Every knowledge check is written once, answered by PyTorch, and shows the code that ran."""
import importlib
import pkgutil

import pytest

import workbench
from workbench.common.checks import Check
from workbench.lessons.catalog import LESSONS


def _all_checks() -> list[tuple[str, Check]]:
    found = []
    for info in pkgutil.walk_packages(workbench.__path__, "workbench."):
        if info.name.endswith("checks") or info.name.endswith("_checks"):
            module = importlib.import_module(info.name)
            found += [(info.name, value) for value in vars(module).values() if isinstance(value, Check)]
    return found


CHECKS = {id(check): (module, check) for module, check in _all_checks()}


def test_checks_are_found_in_every_tool():
    modules = {module for module, _ in CHECKS.values()}
    assert {"workbench.tensors.checks", "workbench.autograd.checks", "workbench.moons.checks",
            "workbench.batches.checks", "workbench.common.device_checks"} <= modules


def test_no_check_is_written_twice():
    checks = [check for _, check in CHECKS.values()]
    keys = [check.key for check in checks]
    questions = [check.question for check in checks]
    assert len(keys) == len(set(keys))
    assert len(questions) == len(set(questions))


def test_every_lesson_check_is_a_tools_check():
    for lesson in LESSONS:
        for step in lesson.steps:
            if step.check is not None:
                assert id(step.check) in CHECKS, (lesson.key, step.title)


@pytest.mark.parametrize("module,check", list(CHECKS.values()),
                         ids=[check.key for _, check in CHECKS.values()])
def test_each_check_is_answered_by_pytorch_and_shows_its_own_function(module, check):
    answer = check.answer()
    assert answer.correct_option in check.options
    assert answer.shown_value
    assert check.code.startswith(f"def {check.compute.__name__}(")
    assert "return Answer(" in check.code
