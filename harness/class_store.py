"""The class store as a benchmark or an end-to-end test uses it beside the servers it starts:
seating learners, posting runs, reading what the pages wrote.

Those calls are not a page on a learner's screen, which waits at most
workbench/classroom/database.py's DEADLINE_SECONDS (1.5 s) for the database and then says it is
out of reach. On a loaded 2-core machine a benchmark's own call once took longer than that (the
first one, which checks the schema, beside a server under load), and the whole run failed on
it. They wait up to OBSERVER_DEADLINE_SECONDS instead; what the pages see is what is measured.
"""
from __future__ import annotations

from workbench.classroom.store import ClassStore

OBSERVER_DEADLINE_SECONDS = 30.0


def observer_store(url: str) -> ClassStore:
    return ClassStore(url, deadline=OBSERVER_DEADLINE_SECONDS)
