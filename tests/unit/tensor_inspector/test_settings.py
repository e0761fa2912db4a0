"""The Tensor inspector's settings table and knowledge checks."""
from __future__ import annotations

import pytest

from workbench.common.checks import Check
from workbench.tensor_inspector import checks
from workbench.tensor_inspector.settings import TABLE, TensorSettings

LINK_NAMES = ("shape", "dtype", "fill", "value", "seed", "ops", "lhs", "rhs", "combine")


def test_the_public_link_names_are_kept():
    assert TABLE.names == LINK_NAMES


@pytest.mark.parametrize("name", LINK_NAMES)
def test_every_setting_has_a_label_and_help(name):
    p = TABLE[name]
    assert p.label and p.label != "" and p.help, name
    assert p.meaning


def test_defaults_write_no_parameters_and_a_link_round_trips():
    assert TABLE.write(TensorSettings()) == {}
    settings = TensorSettings(shape=(), dtype="bfloat16", fill="full", value=2.5, seed=9,
                              ops="t().view(-1)", lhs=(3, 1), rhs=(), combine="matmul")
    read, problems = TABLE.read(TABLE.write(settings))
    assert read == settings and not problems


@pytest.mark.parametrize("raw", ["2,-3", "2,x", "1,2,3,4,5,6", "2000000000"])
def test_a_bad_shape_is_refused_not_clamped(raw):
    settings, problems = TABLE.read({"shape": raw})
    assert settings.shape == TensorSettings().shape
    assert [p.param for p in problems] == ["shape"]


def test_broadcast_shapes_have_their_own_limits():
    assert TABLE.read({"lhs": "1,2,3,4,5,6"})[0].lhs == (1, 2, 3, 4, 5, 6)
    assert TABLE.read({"rhs": "4097"})[1][0].param == "rhs"


def test_choices_match_without_regard_to_case():
    assert TABLE.read({"dtype": "BFloat16", "combine": "MatMul"})[0] == TensorSettings(
        dtype="bfloat16", combine="matmul")


ALL_CHECKS = [value for value in vars(checks).values() if isinstance(value, Check)]


@pytest.mark.parametrize("check", ALL_CHECKS, ids=lambda c: c.key)
def test_each_check_is_answered_by_pytorch_with_one_of_its_options(check):
    answer = check.answer()
    assert answer.correct_option in check.options
    assert "torch." in check.code and "def " in check.code


def test_checks_are_written_once():
    assert len({c.key for c in ALL_CHECKS}) == len(ALL_CHECKS)
    assert len({c.question for c in ALL_CHECKS}) == len(ALL_CHECKS)
    assert set(checks.PAGE_CHECKS) | set(checks.LESSON_CHECKS) == set(ALL_CHECKS)
    assert [c.key for c in checks.PAGE_CHECKS] == ["ti_t_stride", "ti_view", "ti_bf16",
                                                   "ti_permute"]
