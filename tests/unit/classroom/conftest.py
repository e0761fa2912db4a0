"""The class store's fixtures: the same tests on a temporary SQLite file and on a throwaway
PostgreSQL server (harness/postgres.py; those runs carry the `spawns` marker)."""
from __future__ import annotations

import pytest

from harness.postgres import throwaway_postgres
from workbench.classroom.schema import METADATA
from workbench.classroom.store import ClassStore


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def postgres_url():
    with throwaway_postgres() as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.spawns)])
def store(request, tmp_path):
    clock = Clock()
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'classroom.sqlite3'}"
    else:
        url = request.getfixturevalue("postgres_url")
    made = ClassStore(url, clock=clock)
    made.clock_for_test = clock
    yield made
    with made.engine.begin() as connection:          # the next test starts from an empty database
        METADATA.drop_all(connection)
    made.dispose()
