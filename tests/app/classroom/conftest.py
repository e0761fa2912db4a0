"""The class pages' AppTest runs follow each other within milliseconds: the send a follower's
page reads (and the class's paced checks) is read fresh on every run here, not kept for
SEND_MAX_AGE as a server keeps it (workbench/classroom/send_cache.py has its own tests, with a
clock), and every run is a heartbeat (a server's pages beat every HEARTBEAT_SECONDS), so a
removal or a rename reaches the learner's next run."""
from __future__ import annotations

import pytest

from components import class_session


@pytest.fixture(autouse=True)
def sends_read_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(class_session._SENDS, "max_age", 0.0)
    monkeypatch.setattr(class_session._PACINGS, "max_age", 0.0)
    monkeypatch.setattr(class_session, "HEARTBEAT_SECONDS", 0.0)
