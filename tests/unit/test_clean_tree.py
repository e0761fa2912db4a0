"""tests/cleantree.py, which the session check in tests/conftest.py uses: what counts as new."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.cleantree import new_files, untracked_files

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(root, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text(".venv/\n__pycache__/\n*.pt\n")
    (tmp_path / "app.py").write_text("print('hi')\n")
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "site.py").write_text("")
    _git(tmp_path, "add", ".gitignore", "app.py")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
    return tmp_path


def test_a_tracked_checkout_lists_nothing(repo):
    assert untracked_files(repo) == set()


def test_a_new_file_is_detected_wherever_it_is(repo):
    before = untracked_files(repo)
    (repo / "notes.txt").write_text("x")
    (repo / "deep" / "er").mkdir(parents=True)
    (repo / "deep" / "er" / "export.ipynb").write_text("{}")
    assert new_files(before, repo) == ["deep/er/export.ipynb", "notes.txt"]


def test_an_ignored_checkpoint_is_detected(repo):
    before = untracked_files(repo)
    (repo / "moons_mlp.pt").write_bytes(b"\0")
    assert new_files(before, repo) == ["moons_mlp.pt"]


def test_the_venv_caches_and_egg_info_are_not(repo):
    before = untracked_files(repo)
    (repo / ".venv" / "lib" / "new.py").write_text("")
    for folder in ("__pycache__", ".pytest_cache", ".hypothesis", "pkg.egg-info", "sub/__pycache__"):
        (repo / folder).mkdir(parents=True, exist_ok=True)
        (repo / folder / "f").write_text("")
    assert new_files(before, repo) == []


def test_a_file_there_before_is_not_new(repo):
    (repo / "scratch.py").write_text("")
    before = untracked_files(repo)
    assert before == {"scratch.py"}
    assert new_files(before, repo) == []


def test_a_changed_tracked_file_is_not_a_new_file(repo):
    before = untracked_files(repo)
    (repo / "app.py").write_text("print('changed')\n")
    assert new_files(before, repo) == []


def test_outside_git_the_scan_still_finds_new_files(tmp_path):
    before = untracked_files(tmp_path)
    (tmp_path / "left.pt").write_bytes(b"\0")
    assert new_files(before, tmp_path) == ["left.pt"]
