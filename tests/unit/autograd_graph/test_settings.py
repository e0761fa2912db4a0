"""The autograd page's settings table and its knowledge checks."""
from __future__ import annotations

import pytest
import torch

from workbench.autograd_graph import checks
from workbench.autograd_graph.presets import PRESETS
from workbench.autograd_graph.settings import TABLE, AutogradSettings, preset_settings
from workbench.common.checks import Check


def test_the_link_names_teachers_use_are_kept():
    assert TABLE.names == ("code", "backward", "retain", "zero", "layout", "saved")


@pytest.mark.parametrize("param", TABLE.params, ids=lambda p: p.name)
def test_every_setting_has_a_label_and_help(param):
    assert param.label and param.label != param.name
    assert param.help and param.meaning


def test_links_read_and_write_through_the_table():
    settings, problems = TABLE.read({"code": "w = torch.ones(2)", "backward": "3", "retain": "1",
                                     "layout": "lr", "saved": "yes"})
    assert not problems
    assert settings == AutogradSettings("w = torch.ones(2)", 3, True, False, "LR", True)
    assert TABLE.write(settings) == {"code": "w = torch.ones(2)", "backward": "3", "retain": "1",
                                     "layout": "LR", "saved": "1"}
    assert TABLE.write(AutogradSettings()) == {}


def test_bad_link_values_fall_back_and_are_named():
    settings, problems = TABLE.read({"backward": "99", "layout": "diagonal", "code": "x" * 5000})
    assert settings.backward == TABLE["backward"].hi and settings.layout == "TB"
    assert {p.param for p in problems} == {"layout", "code"}


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
def test_every_preset_is_a_valid_link(preset):
    link = TABLE.write(preset_settings(preset))
    assert TABLE.read(link) == (preset_settings(preset), [])


CHECKS = [value for value in vars(checks).values() if isinstance(value, Check)]


def test_the_checks_are_the_page_and_lesson_ones_each_once():
    assert {c.key for c in CHECKS} == {"ag_dy_dx_quadratic", "ag_w_grad_linear",
                                       "ag_three_backward", "ag_no_grad_update",
                                       "ag_inference_tensor", "ag_rebind_update"}
    assert set(checks.PAGE_CHECKS) <= set(checks.LESSON_CHECKS) == set(CHECKS)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.key)
def test_each_check_is_answered_by_its_own_code(check):
    answer = check.answer()                # raises if the answer is not one of the options
    assert answer.shown_value
    assert check.code.startswith(f"def {check.compute.__name__}()")
    assert "Answer(" in check.code


def test_the_answers_are_pytorchs():
    x = torch.tensor(2.0, requires_grad=True)
    (dy_dx,) = torch.autograd.grad(x ** 2 + 3 * x + 1, x)
    assert checks.DY_DX_QUADRATIC.answer().correct_option == f"{dy_dx.item():g}"
    w, b = torch.tensor(3.0, requires_grad=True), torch.tensor(1.0, requires_grad=True)
    (dw,) = torch.autograd.grad((w * 2.0 + b - 10) ** 2, w)
    assert checks.W_GRAD_LINEAR.answer().correct_option == f"{dw.item():g}"
    (once,) = torch.autograd.grad(w ** 2, w)
    assert checks.THREE_BACKWARD.answer().correct_option == f"{3 * once.item():.1f}"
    assert "leaf Variable" in checks.UPDATE_OUTSIDE_NO_GRAD.answer().shown_value
