"""The class store's fixtures: the same tests on a temporary SQLite file and on a throwaway
PostgreSQL server (harness/postgres.py; those runs carry the `spawns` marker)."""
from __future__ import annotations

import pytest

from harness.postgres import throwaway_postgres
from workbench.classroom.schema import METADATA, MIGRATIONS, schema_version
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


def database_before(connection, docstring_start: str) -> int:
    """Leave the database as the release before a migration left it: every migration before the
    one whose docstring starts with `docstring_start` run, and that version recorded. The
    migration is found by its docstring, not its number (other branches add versions, and a
    merge renumbers them). Returns its index in MIGRATIONS."""
    wanted = next(m for m in MIGRATIONS if (m.__doc__ or "").startswith(docstring_start))
    before = MIGRATIONS.index(wanted)
    METADATA.create_all(connection, tables=[schema_version])
    for migration in MIGRATIONS[:before]:
        migration(connection)
    connection.execute(schema_version.insert().values(version=before))
    return before
