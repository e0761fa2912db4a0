"""The class pages' AppTest runs follow each other within milliseconds: the send a follower's
page reads is read fresh on every run here, not kept for SEND_MAX_AGE as a server keeps it
(workbench/classroom/send_cache.py has its own tests, with a clock)."""
from __future__ import annotations

import pytest

from components import class_session


@pytest.fixture(autouse=True)
def sends_read_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(class_session._SENDS, "max_age", 0.0)
