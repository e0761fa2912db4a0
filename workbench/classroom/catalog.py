"""Every knowledge check of the workbench by its key: what the teacher's board shows for an answer.

The checks are found where they are written (each tool's `checks.py`), so a new check is on the
board without being listed twice; an answer to a key not found here is refused by the page.
"""
from __future__ import annotations

import functools
import importlib
import pkgutil

import workbench
from workbench.common.checks import Check


@functools.cache
def all_checks() -> dict[str, Check]:
    found: dict[str, Check] = {}
    for info in pkgutil.walk_packages(workbench.__path__, "workbench."):
        if info.name.endswith("checks") and not info.name.startswith("workbench.classroom"):
            module = importlib.import_module(info.name)
            found.update((value.key, value) for value in vars(module).values()
                         if isinstance(value, Check))
    return found
