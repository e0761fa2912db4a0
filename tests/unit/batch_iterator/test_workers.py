"""The copy of CPython's forkserver `Popen._launch` in workbench/batch_iterator/workers.py is pinned.

`_ScriptSafePopen._launch` copies a private CPython method and adds two lines. If a Python
upgrade changes the original, the copy may be starting workers the old way: these tests fail
then, and say what to re-check.
"""
from __future__ import annotations

import ast
import hashlib
import inspect
import os
import platform
import textwrap

import pytest
import torch

from workbench.batch_iterator import workers
from workbench.common.jobs import JOB_NICENESS

popen_forkserver = pytest.importorskip("multiprocessing.popen_forkserver")


def _source(function) -> str:
    return textwrap.dedent(inspect.getsource(function))


def test_the_copied_stdlib_method_is_the_one_the_copy_was_checked_against():
    digest = hashlib.sha256(_source(popen_forkserver.Popen._launch).encode()).hexdigest()
    assert digest in workers.CHECKED_SOURCES_SHA256.values(), (
        f"{workers.COPIED_METHOD} in Python {platform.python_version()} differs from the "
        "version(s) workbench/batch_iterator/workers.py copies "
        f"({', '.join(workers.CHECKED_SOURCES_SHA256)}). Re-read the new original, bring "
        "_ScriptSafePopen._launch in line with it (keeping only the two prep_data.pop lines "
        f"added), then add '{platform.python_version()}': '{digest}' to CHECKED_SOURCES_SHA256."
    )


def _body(function, *, without: tuple[str, ...] = ()) -> str:
    """The function's statements as an AST dump (no comments, quotes or line breaks)."""
    tree = ast.parse(_source(function)).body[0]
    assert isinstance(tree, ast.FunctionDef)
    removed = {ast.dump(ast.parse(line).body[0]) for line in without}
    tree.body = [stmt for stmt in tree.body if ast.dump(stmt) not in removed]
    return ast.dump(tree)


def test_the_copy_differs_from_the_original_only_in_the_added_lines():
    copy = workers._ScriptSafePopen._launch
    original = popen_forkserver.Popen._launch
    assert _body(copy) != _body(original), "the copy no longer changes anything"
    assert _body(copy, without=workers.ADDED_LINES) == _body(original), (
        "_ScriptSafePopen._launch differs from CPython's Popen._launch in more than the lines "
        "listed in workers.ADDED_LINES: re-check the copy against the original."
    )


def test_the_added_lines_are_in_the_copy():
    source = _source(workers._ScriptSafePopen._launch)
    for line in workers.ADDED_LINES:
        assert line in source


# -- worker processes below the training threads ------------------------------------------------
class _Niceness(torch.utils.data.Dataset):
    """Each item: the nice value of the worker that loaded it."""

    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int) -> int:
        return os.getpriority(os.PRIO_PROCESS, 0)


@pytest.mark.spawns
@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="no nice values here")
def test_workers_run_below_the_training_threads():
    assert os.getpriority(os.PRIO_PROCESS, 0) < workers.WORKER_NICENESS   # the test can fail
    assert workers.WORKER_NICENESS > JOB_NICENESS
    loader = torch.utils.data.DataLoader(_Niceness(), batch_size=None, num_workers=2,
                                         multiprocessing_context=workers.worker_context())
    assert [int(nice) for nice in loader] == [workers.WORKER_NICENESS] * 4
    assert os.getpriority(os.PRIO_PROCESS, 0) < workers.WORKER_NICENESS   # the server is not lowered
