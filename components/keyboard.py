"""Keyboard access (issue 28, item 3): what a learner who never touches the mouse needs beyond
Streamlit 1.67's own markup. docs/accessibility.md lists the shortcuts; tests/e2e/
test_keyboard.py drives each tool with the keyboard alone.

- **Skip to the controls.** A tool's main control (Play, Next node, Next batch, the op chain, a
  lesson's Next) comes after the settings, 30 to 60 Tab presses into the page. The first Tab
  stop of a tool page is a link, shown when focused, that moves focus to it. A page names its
  controls with `skip_to_controls(key, ...)`; the link goes to the first of them that is enabled
  (Play, or Pause while a run plays).
- **Focus handed on.** A pressed button that becomes disabled (Play once the run plays, Next at
  the last batch) or is drawn anew loses the focus to the page's body, and the next Tab starts
  from the top of the page. The focus goes instead to the same control drawn anew, else to the
  nearest enabled button around it (Play -> Pause, Pause -> Play, Next -> Back).
- **The folded sidebar is inert.** Streamlit slides it off screen but leaves its links in the
  Tab order (nine invisible stops in presenter mode); `inert` takes them out while it is folded.
  Opened with the header's "Expand sidebar" (which then goes), it gets the focus.
- **A ring that shows.** A control whose own focus ring would be cut off (an input inside the
  box that clips it) marks that box with `RING_ATTRIBUTE`, where components/accessible_theme.py
  draws the ring.
- **Shortcuts.** `st.button(..., shortcut=...)` for the playback and stepping buttons, with the
  key named in the button's help (`with_shortcut`). Streamlit ignores a bare-key shortcut while
  focus is in a text box, a select or a radio, so a learner typing "p" in the op chain does not
  press Play; it reserves `r` and `c` (rerun, clear cache).

The page publishes its controls' keys as a CSS custom property in a style-only `st.html`, which
Streamlit keeps out of the page's layout (a presenter's first screen is measured to the pixel)
and removes with the page. The script that reads it is `KEYBOARD_SCRIPT`, run once per browser
tab beside the theme repairs (components/accessible_theme.py).
"""
from __future__ import annotations

import re

import streamlit as st

from components.code_block import COPY_CLASS

SKIP_PROPERTY = "--wb-skip-to"
SKIP_LINK_ID = "wb-skip-to-controls"
SKIP_LINK_TEXT = "Skip to the controls"
RING_ATTRIBUTE = "data-wb-focus-ring"     # the box that shows a clipped control's focus ring
_KEY = re.compile(r"[A-Za-z0-9_-]+")


def skip_to_controls(*keys: str) -> None:
    """Make this page's first Tab stop a "Skip to the controls" link to the widget or container
    with the first of `keys` that has an enabled control in it. Once per page run."""
    for key in keys:
        if not _KEY.fullmatch(key):
            raise ValueError(f"not a widget key the skip link can name: {key!r}")
    st.html(f'<style>:root {{ {SKIP_PROPERTY}: "{" ".join(keys)}"; }}</style>')


def with_shortcut(help_text: str, shortcut: str) -> str:
    """A button's help that names its keyboard shortcut (the button shows the key too, but a
    screen reader reads the help)."""
    return f"{help_text.rstrip('.')} (key {shortcut})." if help_text else f"Key {shortcut}."


KEYBOARD_SCRIPT = f"""<script>
(() => {{
  if (window.__wbKeyboard) return;
  window.__wbKeyboard = true;
  const FOCUSABLE = 'button, input, textarea, select, a[href], [role="slider"], '
    + '[tabindex]:not([tabindex="-1"])';
  // Enabled and shown: Streamlit keeps undisplayed copies of some buttons, and a code block's
  // copy button is invisible until hovered.
  const usable = (el) => Boolean(el) && el.isConnected && !el.disabled
    && el.getAttribute("aria-disabled") !== "true" && !el.closest("[inert]")
    && el.checkVisibility({{ visibilityProperty: true }});
  // A widget's label carries a help button: never the control itself.
  const firstUsable = (box, selector, except) => [...box.querySelectorAll(selector)].find(
    (el) => el !== except && usable(el) && !el.closest('[data-testid="stWidgetLabel"]')) || null;
  const keyClasses = (el) => {{
    const found = [];
    for (let node = el; node && node !== document.body; node = node.parentElement) {{
      for (const name of node.classList || []) if (name.startsWith("st-key-")) found.push(name);
    }}
    return found;
  }};

  // Skip to the controls: the keys the page published, the first with an enabled control wins.
  const skipKeys = () => getComputedStyle(document.documentElement)
    .getPropertyValue("{SKIP_PROPERTY}").replace(/["']/g, " ").trim().split(/\\s+/).filter(Boolean);
  const skipTarget = () => {{
    for (const key of skipKeys()) {{
      const box = document.querySelector(".st-key-" + CSS.escape(key));
      if (!box) continue;
      const target = box.matches(FOCUSABLE) && usable(box) ? box
        : firstUsable(box, "button", null) || firstUsable(box, FOCUSABLE, null);
      if (target) return target;
    }}
    return null;
  }};
  const link = document.createElement("a");
  link.id = "{SKIP_LINK_ID}";
  link.href = "#";
  link.textContent = "{SKIP_LINK_TEXT}";
  link.addEventListener("click", (event) => {{
    event.preventDefault();
    const target = skipTarget();
    if (!target) return;
    target.focus();
    target.scrollIntoView({{ block: "center" }});
  }});
  const placeSkipLink = () => {{
    if (skipKeys().length === 0) {{ link.remove(); return; }}
    if (document.body.firstChild !== link) document.body.prepend(link);
  }};

  // The folded sidebar: off screen, so out of the Tab order too.
  const foldSidebar = () => {{
    const sidebar = document.querySelector('[data-testid="stSidebar"]');
    if (!sidebar) return;
    const folded = sidebar.getAttribute("data-collapsed") === "true";
    if (sidebar.inert !== folded) sidebar.inert = folded;
  }};

  // The focus ring's place: Streamlit 1.67 draws a text box, a select, a slider and a toggle
  // as an input inside a box that clips it, and a radio's input inside a 1 px box, so a ring
  // on the input itself is cut off. The ring goes on the nearest box around it that shows
  // (the CSS draws it on [{RING_ATTRIBUTE}]).
  const ringBox = (el) => {{
    let box = el;
    for (let depth = 0; depth < 4 && box.parentElement; depth++) {{
      const parent = box.parentElement, size = box.getBoundingClientRect();
      const clipped = getComputedStyle(parent).overflow !== "visible";
      if (!clipped && size.width >= 4 && size.height >= 4) break;
      box = parent;
    }}
    return box;
  }};
  let ringed = null;
  document.addEventListener("focusin", (event) => {{
    if (ringed) ringed.removeAttribute("{RING_ATTRIBUTE}");
    ringed = null;
    const el = event.target;
    if (!(el instanceof Element) || !el.matches(":focus-visible")) return;
    const box = ringBox(el);
    if (box !== el) {{ box.setAttribute("{RING_ATTRIBUTE}", ""); ringed = box; }}
  }}, true);
  document.addEventListener("focusout", () => {{
    if (ringed) ringed.removeAttribute("{RING_ATTRIBUTE}");
    ringed = null;
  }}, true);

  // Focus handed on: remember what had the focus; when it is lost to the body because that
  // control was disabled or redrawn, give it to the same control drawn anew, else to the nearest
  // enabled button around it (the playback row, the stepping buttons, the knowledge check).
  let held = null;
  document.addEventListener("focusin", (event) => {{
    const el = event.target;
    held = el === link || el === document.body ? null : {{ element: el, keys: keyClasses(el) }};
  }}, true);
  // A press elsewhere on the page is where the learner means to be: nothing to hand on.
  document.addEventListener("pointerdown", (event) => {{
    if (held && !(held.element.contains && held.element.contains(event.target))) held = null;
  }}, true);
  const focusLost = () => {{
    const active = document.activeElement;
    return !active || active === document.body || active === document.documentElement
      || (held && active === held.element && !usable(active));
  }};
  const handOn = () => {{
    if (!held || !focusLost()) return;
    const {{ element, keys }} = held;
    if (usable(element)) return;
    // The header's "Expand sidebar" goes once the sidebar is open: the focus goes into it.
    if (element.closest('[data-testid="stExpandSidebarButton"]')) {{
      const sidebar = document.querySelector('[data-testid="stSidebar"]:not([inert])');
      const first = sidebar && firstUsable(sidebar, FOCUSABLE, null);
      if (first) first.focus();
      return;
    }}
    let start = element.isConnected ? element.parentElement : null;
    if (!start) {{
      const box = keys.map((name) => document.querySelector("." + CSS.escape(name))).find(Boolean);
      if (!box) return;
      start = box;
    }}
    for (let box = start; box && box !== document.body; box = box.parentElement) {{
      if (box.matches('[data-testid="stMain"], [data-testid="stSidebar"]')) return;
      // A code block's Copy button is no next step: the check's Try again, not the answer's Copy.
      const next = firstUsable(box, "button:not(.{COPY_CLASS})", element)
        || firstUsable(box, FOCUSABLE, element);
      if (next) {{ next.focus(); return; }}
    }}
  }};

  // After each batch of changes to the page: what a redraw can change at once. The skip link
  // reads a computed style, which forces the browser to restyle the page mid-redraw: it is
  // placed twice a second instead (a page change swaps the style that names the controls
  // without touching the observed nodes anyway).
  let queued = false;
  const afterChanges = () => {{
    queued = false;
    foldSidebar();
    handOn();
  }};
  const queue = () => {{ if (!queued) {{ queued = true; requestAnimationFrame(afterChanges); }} }};
  new MutationObserver(queue).observe(document.body, {{
    subtree: true, childList: true, attributes: true, attributeFilter: ["disabled", "data-collapsed"],
  }});
  const tidy = () => {{ placeSkipLink(); afterChanges(); }};
  tidy();
  setInterval(tidy, 500);
}})();
</script>"""
