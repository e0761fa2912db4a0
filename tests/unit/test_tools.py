"""Every tool is whole: one record in workbench/tools.py and all that a record promises.

A tool is two folders and one record (docs/adding-a-tool.md). A folder without a record, or a
record without its folders, settings table, checks, tests or docs, fails here and names what is
missing, so a tool cannot be half added, and a half-removed one cannot linger. The checklist in
docs/adding-a-tool.md is read against the same list, so the document stays true.
"""
from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from app_pages.navigation import CLASS_PAGE, HOME, LESSONS_PAGE, all_pages
from workbench.common.links import LinkSchema
from workbench.tools import BY_NAME, TOOLS, Tool

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "adding-a-tool.md"
# Packages and pages that are not tools: shared logic, the class, the lessons and home.
SHARED_PACKAGES = frozenset({"common", "classroom", "lessons"})
OTHER_PAGES = (HOME, LESSONS_PAGE, CLASS_PAGE)

# What a record promises, as paths under the checkout ({name}: the tool's one name). A path that
# ends in "/" is a folder that must hold at least one test_*.py; a "*" is a glob.
PROMISED = (
    "workbench/{name}/__init__.py",
    "workbench/{name}/settings.py",
    "workbench/{name}/checks.py",
    "app_pages/{name}/__init__.py",
    "app_pages/{name}/page.py",
    "tests/unit/{name}/",
    "tests/app/{name}/",
    "tests/e2e/test_{name}*.py",
)
# What the docs must say of each tool.
DOC_BLOCK = "<!-- settings:{name} -->"        # its generated table in docs/lesson-links.md
README_ROW = "`/{name}`"                        # its row in README.md's table of pages


def _present(root: Path, promise: str) -> bool:
    if promise.endswith("/"):
        return any((root / promise).glob("test_*.py"))
    if "*" in promise:
        return any(root.glob(promise))
    return (root / promise).is_file()


def problems(root: Path, tools: tuple[Tool, ...]) -> list[str]:
    """What is missing or left over for `tools` in the tree at `root`, one sentence each."""
    found: list[str] = []
    names = [tool.name for tool in tools]
    for field in ("name", "title", "icon", "widget_prefix", "figure_key", "control_key"):
        values = [getattr(tool, field) for tool in tools]
        if len(values) != len(set(values)):
            found.append(f"two tools share a {field}: {sorted(values)}")
    lesson_links = (root / "docs" / "lesson-links.md").read_text(encoding="utf-8")
    readme = (root / "README.md").read_text(encoding="utf-8")
    for tool in tools:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", tool.name):
            found.append(f"{tool.name!r}: a tool's name is a lower-case identifier (package and URL path)")
        for promise in PROMISED:
            path = promise.format(name=tool.name)
            if not _present(root, path):
                found.append(f"{tool.name}: {path} is missing")
        if not isinstance(tool.settings, LinkSchema):
            found.append(f"{tool.name}: its settings table is not a LinkSchema")
        for table_name in tool.link_tables:
            if DOC_BLOCK.format(name=table_name) not in lesson_links:
                found.append(f"{tool.name}: docs/lesson-links.md has no {DOC_BLOCK.format(name=table_name)} "
                             "(python -m workbench.common.readme writes it)")
        row = README_ROW.format(name=tool.url_path)
        if row not in readme:
            found.append(f"{tool.name}: README.md's table of pages has no row for {row}")
    packages = {p.parent.name for p in (root / "workbench").glob("*/__init__.py")}
    for package in sorted(packages - SHARED_PACKAGES - set(names)):
        found.append(f"workbench/{package}/ is a package without a record in workbench/tools.py "
                     "(or, if it is shared, name it in SHARED_PACKAGES here)")
    other_folders = {Path(page.script).parent.name for page in OTHER_PAGES}
    folders = {p.parent.name for p in (root / "app_pages").glob("*/page.py")}
    for folder in sorted(folders - other_folders - set(names)):
        found.append(f"app_pages/{folder}/ has a page but no record in workbench/tools.py")
    return found


def test_every_tool_is_whole_and_every_tool_folder_has_a_record():
    assert problems(ROOT, TOOLS) == []


def test_the_records_settings_tables_are_the_tools_own():
    """The record holds the table its package defines, not a copy or another tool's."""
    import importlib

    for tool in TOOLS:
        assert tool.settings is importlib.import_module(f"{tool.package}.settings").TABLE, tool.name


def test_navigation_serves_every_tool_at_its_url_path():
    served = {page.url_path: page for page in all_pages()}
    for tool in TOOLS:
        assert served[tool.url_path].script == tool.script
        assert served[tool.url_path].main_key == tool.main_key
    assert BY_NAME == {tool.name: tool for tool in TOOLS}


def test_the_guide_names_everything_a_tool_needs():
    guide = GUIDE.read_text(encoding="utf-8")
    missing = [promise for promise in (*PROMISED, DOC_BLOCK, README_ROW) if promise not in guide]
    assert not missing, f"docs/adding-a-tool.md does not name {missing}"
    assert "workbench/tools.py" in guide


# --- The check can fail: a tool half added, in a copy of the tree's skeleton -------------------

def _skeleton(tmp_path: Path) -> Path:
    """The files `problems` reads, for the real tools, copied into tmp_path."""
    for pattern in ("workbench/*/__init__.py", "workbench/*/settings.py", "workbench/*/checks.py",
                    "app_pages/*/__init__.py", "app_pages/*/page.py", "tests/unit/*/test_*.py",
                    "tests/app/*/test_*.py", "tests/e2e/test_*.py", "docs/lesson-links.md", "README.md"):
        for path in ROOT.glob(pattern):
            target = tmp_path / path.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    assert problems(tmp_path, TOOLS) == []          # the control: the copy is whole
    return tmp_path


def test_a_tool_folder_without_a_record_fails(tmp_path):
    root = _skeleton(tmp_path)
    (root / "app_pages" / "loss_landscape").mkdir()
    (root / "app_pages" / "loss_landscape" / "page.py").write_text("")
    (root / "workbench" / "loss_landscape").mkdir()
    (root / "workbench" / "loss_landscape" / "__init__.py").write_text("")
    found = problems(root, TOOLS)
    assert any(p.startswith("app_pages/loss_landscape/ has a page but no record") for p in found), found
    assert any(p.startswith("workbench/loss_landscape/ is a package without a record") for p in found), found


def test_a_record_without_its_folders_tests_or_docs_fails(tmp_path):
    root = _skeleton(tmp_path)
    half = replace(TOOLS[0], name="loss_landscape", title="Loss landscape", icon=":material/terrain:",
                   widget_prefix="ll_", figure_key="ll_surface", control_key="ll_step", extra_links=())
    (root / "workbench" / "loss_landscape").mkdir()
    (root / "workbench" / "loss_landscape" / "__init__.py").write_text("")
    found = problems(root, (*TOOLS, half))
    missing = {p.split(": ", 1)[1].removesuffix(" is missing")
               for p in found if p.startswith("loss_landscape: ")}
    for promise in PROMISED[1:]:
        assert promise.format(name="loss_landscape") in missing, (promise, found)
    assert "workbench/loss_landscape/__init__.py" not in missing
    assert any("docs/lesson-links.md has no <!-- settings:loss_landscape -->" in p for p in found), found
    assert any("README.md's table of pages has no row" in p for p in found), found


@pytest.mark.parametrize("field", ["name", "widget_prefix", "figure_key", "control_key"])
def test_two_records_with_one_name_or_key_fail(field, tmp_path):
    twin = replace(TOOLS[1], **{field: getattr(TOOLS[0], field)})
    found = problems(_skeleton(tmp_path), (TOOLS[0], twin, *TOOLS[2:]))
    assert any(p.startswith(f"two tools share a {field}") for p in found), found
