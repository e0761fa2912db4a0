"""Every knowledge check is written once, answered by PyTorch, and shows the code that ran."""
import importlib
import pkgutil

import pytest

import workbench
from workbench.common.checks import Check
from workbench.lessons.catalog import LESSONS
from workbench.tools import TOOLS


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
    assert {f"{tool.package}.checks" for tool in TOOLS} | {"workbench.common.device_checks"} <= modules


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


# The outcome each check's fixed explanation was written for. A check runs on fixed inputs, so
# PyTorch gives one answer; its explanation states that answer's verdict in fixed words ("the
# loss falls", "the counter stays put"). If a PyTorch version gave another answer, the words
# would be false: this pin fails first. A new check must be added here.
EXPLAINED_OUTCOMES = {
    'ag_dy_dx_quadratic': '7',
    'ag_w_grad_linear': '-12',
    'ag_three_backward': '18.0',
    'ag_no_grad_update': 'Otherwise PyTorch refuses: w is a leaf that requires grad',
    'ag_rebind_update': 'w.grad is None: w is no longer a leaf',
    'ag_inference_tensor': 'PyTorch raises: an inference tensor cannot be saved for backward',
    'batch_iterator_count': '3 with drop_last, 4 without',
    'batches_per_epoch': '4',
    'batches_with_drop_last': '3',
    'batches_reshuffle': 'different',
    'lesson_default_device': 'cpu',
    'lesson_loss_at_zero': 'the mean of y²',
    'lesson_gradient_signs': 'each gradient has the opposite sign of 3, -2 and 5',
    'lesson_one_step': 'lower',
    'lesson_no_zeroing': "the sum of both steps' gradients",
    'lesson_sixty_steps': 'close (within 0.001) but not exactly',
    'lesson_sigmoid_floor': 'about 0.50',
    'lesson_train_mode_eval': 'different outputs each call',
    'lesson_seeding': 'the same numbers both times, and the global state is untouched',
    'lesson_batchnorm_train_mode': "the 4 points' own mean and variance",
    'lesson_scaler_leak': 'the test points change them',
    'lesson_summed_loss': 'a tensor with a grad_fn',
    'lesson_float_targets': 'a RuntimeError about the target dtype',
    'lesson_softmax_floor': 'about 0.31',
    'lesson_device_mismatch': 'a RuntimeError: the tensors are on different devices',
    'lesson_no_no_grad': 'a graph, and the tensors its backward would need',
    'lesson_data_mutation': "`.data`: no error, a wrong gradient; `no_grad`: PyTorch's in-place error",
    'mt_zero_grad': 'Each backward() adds to .grad, so gradients of earlier batches pile up',
    'training_loop_order': 'zero_grad, forward, backward, step',
    'training_state_dict_round_trip': 'identical predictions',
    'mt_forward_hook': 'Only model(x): forward() skips the hooks',
    'mt_vanishing_gradient': '100 times smaller or less',
    'ti_stride': '(3, 1)',
    'ti_t_stride': '(1, 3)',
    'ti_view': 'No: PyTorch raises a RuntimeError',
    'ti_reshape': 'it is a copy',
    'ti_bf16': '16 KiB',
    'ti_permute': '(60, 5, 1, 20)',
    'home_device_mismatch': 'PyTorch raises an error',
}


def test_every_check_is_pinned_to_the_outcome_its_explanation_was_written_for():
    assert {check.key for _, check in CHECKS.values()} == set(EXPLAINED_OUTCOMES)


@pytest.mark.parametrize("module,check", list(CHECKS.values()),
                         ids=[check.key for _, check in CHECKS.values()])
def test_each_checks_explanation_is_for_the_answer_pytorch_gives(module, check):
    assert check.answer().correct_option == EXPLAINED_OUTCOMES[check.key]
