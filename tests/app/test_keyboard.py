"""The keyboard's part on the server side (components/keyboard.py): each tool page and the
lessons name the controls their skip link goes to, those controls are on the page, and every
button with a shortcut names its key in its help and in docs/accessibility.md. The keyboard
itself is driven in Chromium by tests/e2e/test_keyboard.py."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from app_pages.navigation import LESSONS_PAGE, TOOLS
from components.keyboard import SKIP_PROPERTY, skip_to_controls, with_shortcut
from tests.app.apptest import assert_clean, open_page

DOC = Path(__file__).resolve().parents[2] / "docs" / "accessibility.md"
PAGES = [*TOOLS, LESSONS_PAGE]
SKIP = re.compile(rf'{SKIP_PROPERTY}: "([^"]*)"')


def skip_keys(at) -> list[str]:
    """The keys the page's skip link goes to, in order (the style the page published)."""
    published = [SKIP.search(e.proto.body) for e in at.get("html")]
    found = [match.group(1).split() for match in published if match]
    assert len(found) == 1, f"one skip target a page run, not {len(found)}"
    return found[0]


def widget_keys(at) -> set[str]:
    keys = set()
    for kind in ("button", "text_input", "selectbox", "number_input", "slider", "radio"):
        keys |= {w.key for w in at.get(kind) if getattr(w, "key", None)}
    return keys


def documented_shortcuts() -> list[list[str]]:
    """The rows of docs/accessibility.md's shortcut table: page, key, buttons."""
    rows = []
    for line in DOC.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"`[^`]+`", cells[1]):
            rows.append(cells)
    return rows


@pytest.mark.parametrize("tool", PAGES, ids=lambda tool: tool.url_path)
def test_the_skip_link_goes_to_a_control_on_the_page(tool):
    at = open_page(tool.script)
    assert_clean(at, tool.title)
    keys = skip_keys(at)
    assert keys and keys[0] in widget_keys(at), (tool.title, keys, sorted(widget_keys(at)))


@pytest.mark.parametrize("tool", PAGES, ids=lambda tool: tool.url_path)
def test_each_shortcut_is_named_in_its_help_and_in_the_docs(tool):
    at = open_page(tool.script)
    rows = documented_shortcuts()
    for button in at.button:
        key = button.proto.shortcut
        if not key:
            continue
        # Streamlit uses r and c itself (rerun, clear cache).
        assert key.lower() not in ("r", "c"), (tool.title, button.label)
        assert button.help.endswith(f"(key {key.upper()})."), (tool.title, button.label, button.help)
        name = button.label or button.help.split(" (key ")[0]
        assert any(page == tool.title and shown == f"`{key.upper()}`" and name in buttons
                   for page, shown, buttons in rows), \
            f"docs/accessibility.md lists no {tool.title} row for {name!r} with key {key.upper()}"


def test_the_playback_and_stepping_buttons_have_shortcuts():
    at = open_page("app_pages/moons_trainer/page.py")
    shortcuts = {b.key: b.proto.shortcut for b in at.button}
    assert {k: shortcuts.get(k) for k in ("mt_play", "mt_pause", "mt_step", "mt_reset")} == \
        {"mt_play": "p", "mt_pause": "p", "mt_step": "s", "mt_reset": "0"}


def test_a_key_that_is_not_a_widget_key_is_refused():
    with pytest.raises(ValueError, match="not a widget key"):
        skip_to_controls('mt_play"; } body { display: none')


def test_a_help_names_its_key_once_at_the_end():
    assert with_shortcut("Train one epoch, then stop.", "S") == "Train one epoch, then stop (key S)."
    assert with_shortcut("", "N") == "Key N."
