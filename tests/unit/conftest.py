"""Fixtures shared by the unit tests."""
from __future__ import annotations

import pytest

from tests.runs import SharedKernel


@pytest.fixture(scope="session")
def shared_kernel(tmp_path_factory):
    """One Jupyter kernel for every notebook the session runs (see tests/runs.py)."""
    with SharedKernel.started(tmp_path_factory.mktemp("kernel")) as kernel:
        yield kernel


@pytest.fixture(scope="module")
def trained():
    """A small moons run trained six steps: a model and optimizer with state, one per module."""
    from workbench.moons_trainer.settings import MoonsSettings
    from workbench.moons_trainer.training import TrainingSession

    session = TrainingSession(MoonsSettings(n=300, epochs=2))
    session.run_for(6, 10.0)
    return session
