"""'PyTorch computed it' is true of every knowledge check: its function calls torch (seen by a
TorchFunctionMode, which every torch function and tensor method passes through), or the check
names the library it asks instead."""
import importlib
import pkgutil

import pytest
import torch
from torch.overrides import TorchFunctionMode

import workbench
from workbench.common.checks import Check


class CountTorchCalls(TorchFunctionMode):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


def every_check() -> dict[str, Check]:
    found: dict[str, Check] = {}
    for module in pkgutil.walk_packages(workbench.__path__, "workbench."):
        if module.name.endswith(".checks"):
            for value in vars(importlib.import_module(module.name)).values():
                if isinstance(value, Check):
                    found[value.key] = value
    return found


CHECKS = every_check()


def test_the_checks_are_found():
    assert len(CHECKS) >= 30


@pytest.mark.parametrize("key", sorted(CHECKS))
def test_a_check_computed_by_pytorch_calls_torch(key):
    check = CHECKS[key]
    with CountTorchCalls() as counted:
        check.answer()
    assert (counted.calls > 0) == (check.computed_by == "PyTorch"), (key, counted.calls)


def test_a_function_that_asks_pytorch_nothing_is_caught():
    from workbench.common.checks import Answer

    plain = Check("plain", "?", ("a", "b"), lambda: Answer("a", "a"))
    with CountTorchCalls() as counted:
        plain.answer()
    assert counted.calls == 0
    with CountTorchCalls() as counted:
        torch.ones(2).sum()
    assert counted.calls >= 2
