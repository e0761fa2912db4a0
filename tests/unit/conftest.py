"""Fixtures shared by the unit tests."""
from __future__ import annotations

import pytest

from tests.runs import SharedKernel


@pytest.fixture(scope="session")
def shared_kernel(tmp_path_factory):
    """One Jupyter kernel for every notebook the session runs (see tests/runs.py)."""
    with SharedKernel.started(tmp_path_factory.mktemp("kernel")) as kernel:
        yield kernel
