"""The files in a checkout that git does not track, so a test session can prove it left none.

`untracked_files(root)` is git's own list of untracked files (`git ls-files --others
--exclude-standard`) plus a scan of the tree for ignored files (a checkpoint `*.pt` or an export
written into the checkout is ignored by .gitignore, so git alone would not show it), leaving out
the folders that tools keep on purpose: the virtual environment, git's own folder, caches and
the egg-info of an editable install.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

SKIP_DIRS = frozenset({".venv", ".git", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache"})
SKIP_SUFFIXES = (".egg-info",)


def _skipped(part: str) -> bool:
    return part in SKIP_DIRS or part.endswith(SKIP_SUFFIXES)


def _tracked(root: Path) -> set[str] | None:
    try:
        done = subprocess.run(["git", "ls-files", "-z", "--cached"], cwd=root, capture_output=True,
                              text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        return None                            # not a git checkout (or no git): the scan decides
    return {p for p in done.stdout.split("\0") if p}


def _git_untracked(root: Path) -> set[str]:
    try:
        done = subprocess.run(["git", "ls-files", "-z", "--others", "--exclude-standard"], cwd=root,
                              capture_output=True, text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        return set()
    return {p for p in done.stdout.split("\0") if p}


def _scan(root: Path) -> set[str]:
    """Every file under root, relative and with '/', not descending into skipped folders."""
    found: set[str] = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not _skipped(d)]
        rel = Path(folder).relative_to(root)
        for name in files:
            if not _skipped(name):
                found.add((rel / name).as_posix())
    return found


def untracked_files(root: Path | str) -> set[str]:
    """Files under root that git does not track (untracked or ignored), outside the skipped folders."""
    root = Path(root).resolve()
    tracked = _tracked(root)
    on_disk = _scan(root)
    listed = on_disk | _git_untracked(root)
    if tracked is not None:
        listed -= tracked
    return {p for p in listed if not any(_skipped(part) for part in p.split("/"))}


def new_files(before: set[str], root: Path | str) -> list[str]:
    """What untracked_files(root) lists now that `before` did not, sorted."""
    return sorted(untracked_files(root) - before)
