"""deploy/compose.yaml's class database: the replicas share one PostgreSQL that only they reach,
its password is the deployer's (never written in the repository), and its data outlives the
containers. Docker is not on the test machine, so the file is read as text, service by service."""
from __future__ import annotations

import re
from pathlib import Path

from workbench.classroom.store import URL_SETTING

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = (ROOT / "deploy" / "compose.yaml").read_text()


def _block(text: str, name: str, indent: int) -> str:
    """The lines of the key `name` at `indent` spaces, up to the next key at that indent."""
    match = re.search(rf"^{' ' * indent}{name}:\n((?:(?:{' ' * (indent + 1)}.*)?\n)*)", text, re.M)
    assert match, f"no `{name}:` at indent {indent}"
    return match.group(1)


def test_the_replicas_share_the_postgresql_service_and_wait_for_it():
    app = _block(_block(COMPOSE, "services", 0), "app", 2)
    url = re.search(rf"{URL_SETTING}: \"([^\"]+)\"", app).group(1)
    assert url.startswith("postgresql+psycopg://workbench:") and url.endswith("@db:5432/workbench")
    assert re.search(r"depends_on:\n\s+db:\n\s+condition: service_healthy", app)


def test_the_database_is_not_published_and_its_password_is_the_deployers():
    db = _block(_block(COMPOSE, "services", 0), "db", 2)
    assert "ports:" not in db, "only the replicas may reach the class database"
    assert "pg_isready" in db and "/var/lib/postgresql/data" in db
    # Required from deploy/.env (ignored by git): compose refuses to start without it.
    password = re.compile(r"\$\{WORKBENCH_DB_PASSWORD:\?[^}]+\}")
    assert password.search(db) and password.search(_block(_block(COMPOSE, "services", 0), "app", 2))
    assert "/deploy/.env" in (ROOT / ".gitignore").read_text().splitlines()
    assert re.search(r"^volumes:\n  classes:", COMPOSE, re.M)
