"""What the app adds to Streamlit's own markup and styling so that every page passes WCAG 2.2 AA
in both themes (axe-core finds nothing: tests/e2e/test_accessibility.py; docs/accessibility.md).

- **Primary buttons in the dark theme.** Streamlit draws a primary button's label in white on the
  theme's primary colour. No orange passes both as text on the dark background (it must be light)
  and behind white text (it must be dark): white on the dark theme's orange is 2.56:1. In the
  dark theme the label takes the background colour instead (7.1:1); a disabled one keeps
  Streamlit's grey on the background (it has no orange fill: the dark label vanished there).
- **Captions, code in captions, code comments**: Streamlit fades them to about 60%, under 4.5:1
  on the light theme's grey (4.34:1); here they are the theme's text faded only as far as it
  still reads at 4.6:1 (`muted_text`). So are a disabled slider's label and value (the moons
  trainer's noise, for drawn points), which Streamlit fades to 40% (2.5:1): axe reads them as
  text, not as part of the disabled control.
- **Syntax colours in code blocks**: Streamlit's are the same in both themes and read at 2.2-3.9:1
  on the light theme's code background. Here each kind of token takes an Okabe & Ito hue (the
  figures' palette) moved toward the text colour until it reads at 4.6:1 (`readable`).
- **The sidebar's page list**: Streamlit nests each section's items in a `<div>` inside the `<ul>`
  (axe: `list`, `listitem`). Each section becomes the list (`role="list"` on its `<div>`, the
  outer `<ul>` and the section heading `role="none"`), which is also what a screen reader should
  announce: "Tools, list, 4 items".
- **Code blocks, graph boxes and tables that scroll** (a phone's 390 px cut the tensor inspector's
  facts table and the batch iterator's epoch table) get `tabindex="0"` and a name, so that a
  keyboard reaches their hidden part (axe: `scrollable-region-focusable`).
- **Pointer targets of at least 24x24 CSS px** (WCAG 2.2's 2.5.8): toggles' and radios' rows,
  help icons, headings' links, the tabs' scroll arrows, Plotly's toolbar (`TOUCH_TARGETS_CSS`).
- **The focus ring**: Streamlit's is the primary colour at half strength, 2.3:1 on the light
  background; here every focused control gets a solid ring in `focus_ring` (at least 3:1 on both
  backgrounds), offset so that it sits on the background, not on a primary button's fill. The
  keyboard's other needs (a skip link, focus handed on, the folded sidebar, shortcuts) are
  components/keyboard.py, whose script runs here too.

Which theme is active is the learner's choice in the app menu, and Streamlit marks it nowhere CSS
can read; a small script reads the app's background colour (as the moons trainer's live view
does), marks `<html>` with `data-wb-theme="dark"` or `"light"`, and repairs the markup: as soon as
Streamlit adds elements, and twice a second (a theme change repaints without a rerun, and a code
block can start to scroll without a new element).
"""
from __future__ import annotations

import streamlit as st

from components.code_block import CODE_CLASS, COPY_CLASS
from components.graph_view import GRAPH_CLASS
from components.keyboard import KEYBOARD_SCRIPT, RING_ATTRIBUTE, SKIP_LINK_ID
from workbench.common.palette import BLUE, GREEN, PURPLE, VERMILION
from workbench.common.theme import DARK, LIGHT, focus_ring, muted_text, readable

THEME_ATTRIBUTE = "data-wb-theme"
NAV_LIST = '[data-testid="stSidebarNavItems"]'
# A box around a wide HTML table of the page's own (st.html): it scrolls sideways on a phone
# instead of the page, and the repair script below makes it reachable by keyboard when it does.
SCROLL_X_CLASS = "wb-scroll-x"

_REPAIR = f"""<script>
(() => {{
  if (window.__wbAccessible) return;
  window.__wbAccessible = true;
  const root = document.documentElement;
  const markTheme = () => {{
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app) return;
    const channels = (getComputedStyle(app).backgroundColor.match(/\\d+/g) || []).map(Number);
    if (channels.length < 3) return;
    const theme = channels[0] + channels[1] + channels[2] < 3 * 128 ? "dark" : "light";
    if (root.getAttribute("{THEME_ATTRIBUTE}") !== theme) root.setAttribute("{THEME_ATTRIBUTE}", theme);
  }};
  const repairNav = () => {{
    const list = document.querySelector('{NAV_LIST}');
    if (!list || list.getAttribute("role") === "none") return;
    list.setAttribute("role", "none");
    for (const section of list.children) {{
      if (section.tagName !== "DIV") continue;
      section.setAttribute("role", "list");
      const heading = section.querySelector(':scope > header');
      if (heading) {{
        heading.setAttribute("role", "none");
        section.setAttribute("aria-label", heading.textContent.replace("expand_more", "").trim());
      }}
    }}
  }};
  // A code block wider than its column scrolls: a keyboard user must be able to reach it.
  const focusableCode = () => {{
    for (const box of document.querySelectorAll('[data-testid="stCode"] > pre, .{CODE_CLASS} > pre')) {{
      if (box.hasAttribute("tabindex") || box.scrollWidth <= box.clientWidth + 1) continue;
      box.setAttribute("tabindex", "0");
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", "Code (scrolls sideways)");
    }}
  }};
  // So does a graph's box on the presenter stage (components/graph_view.py draws the figure).
  const focusableGraphs = () => {{
    for (const figure of document.querySelectorAll("figure.{GRAPH_CLASS}")) {{
      for (let box = figure.parentElement; box; box = box.parentElement) {{
        if (box.matches('[data-testid="stMain"], [data-testid="stAppViewContainer"]')) break;
        const style = getComputedStyle(box);
        const scrolls = /auto|scroll/.test(style.overflowX + style.overflowY)
          && (box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1);
        if (!scrolls) continue;
        if (!box.hasAttribute("tabindex")) {{
          box.setAttribute("tabindex", "0");
          box.setAttribute("role", "region");
          box.setAttribute("aria-label", (figure.getAttribute("aria-label") || "Graph") + " (scrolls)");
        }}
        break;
      }}
    }}
  }};
  // So does a table wider than a phone (st.table's box scrolls sideways): named by its
  // caption, or the heading its section gives it.
  const focusableTables = () => {{
    const tables = '[data-testid="stTable"] table, .{SCROLL_X_CLASS} > table';
    for (const table of document.querySelectorAll(tables)) {{
      const box = table.parentElement;
      if (!box || box.hasAttribute("tabindex") || box.scrollWidth <= box.clientWidth + 1) continue;
      const caption = table.querySelector("caption");
      const name = caption ? caption.textContent.trim() : "Table";
      box.setAttribute("tabindex", "0");
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", name + " (scrolls sideways)");
    }}
  }};
  const repair = () => {{ markTheme(); repairNav(); focusableCode(); focusableGraphs(); focusableTables(); }};
  repair();
  // At once when Streamlit draws (a revealed answer's code block is reachable before anything,
  // axe included, can look at it), and twice a second for what changes without a new element
  // (a block that starts to scroll when its column narrows, the theme).
  new MutationObserver(repair).observe(document.body, {{childList: true, subtree: true}});
  // A code block's Copy button (components/code_block.py): the code's text, without the line
  // numbers (drawn by CSS, so not part of innerText). The clipboard API needs a secure page
  // (https or this machine); elsewhere the selection is copied the old way.
  document.addEventListener("click", (event) => {{
    const button = event.target.closest && event.target.closest(".{COPY_CLASS}");
    if (!button) return;
    const code = button.parentElement.querySelector("pre code");
    const text = code ? code.innerText : "";
    const done = () => {{
      button.textContent = "Copied";
      setTimeout(() => {{ button.textContent = button.dataset.label || "Copy code"; }}, 1500);
    }};
    if (navigator.clipboard && window.isSecureContext) {{
      navigator.clipboard.writeText(text).then(done, () => {{}});
    }} else {{
      const range = document.createRange();
      range.selectNodeContents(code);
      const selection = getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      if (document.execCommand("copy")) done();
      selection.removeAllRanges();
    }}
  }});
  setInterval(repair, 500);
}})();
</script>"""


# What shows the focus: the focused element itself or, where Streamlit clips or hides it (a
# text box's, a select's, a radio's input), the box the keyboard script marks around it.
FOCUSED = (
    ':is(a, button, summary, input, textarea, select, [role="tab"], '
    '[tabindex]:not([tabindex="-1"])):focus-visible',
    f"[{RING_ATTRIBUTE}]",
)

# The skip link (components/keyboard.py) is the page's first Tab stop: out of sight until it
# has the focus, then at the top left, above Streamlit's header.
SKIP_LINK_CSS = f"""
#{SKIP_LINK_ID} {{
  position: fixed; top: 0.5rem; left: 0.5rem; z-index: 1000100; transform: translateY(-300%);
  padding: 0.5rem 1rem; border: 2px solid; border-radius: 0.5rem;
  font-family: "Source Sans", sans-serif; font-size: 1rem; font-weight: 600;
}}
#{SKIP_LINK_ID}:focus {{ transform: none; }}"""

# WCAG 2.2's 2.5.8 (AA): every pointer target at least 24x24 CSS px, which a phone's finger needs
# most (tests/e2e/test_phone.py measures every one on every page at 390x844). Streamlit 1.67
# draws a toggle's and a radio's row 21-22 px tall, a help icon and a heading's link 16x16, the
# tabs' scroll arrows 20 px wide and Plotly's toolbar buttons 22 px tall; each grows to 24 px,
# its icon centred, without moving what is around it by more than those few pixels.
TOUCH_TARGETS_CSS = """
[data-testid="stCheckbox"] label, [data-testid="stRadio"] [role="radiogroup"] label {
  min-height: 24px; align-items: center; }
[data-testid="stTooltipIcon"] button, a[aria-label="Link to heading"] {
  min-width: 24px; min-height: 24px; display: inline-flex; align-items: center;
  justify-content: center; }
[data-testid="stTabsScrollLeft"], [data-testid="stTabsScrollRight"] { min-width: 24px; }
.modebar-btn { min-height: 24px; min-width: 24px; }
[data-testid="stSlider"] [data-orientation="horizontal"][style*="touch-action"] { min-height: 24px; }"""

# Prism's token classes (Streamlit's code blocks) and the hue each kind is drawn in; the
# workbench's own blocks (components/code_block.py) name their tokens `tok-<kind>` with the
# first kind of each group.
SYNTAX_HUES = {
    ("keyword", "function", "class-name"): BLUE,
    ("string", "char", "regex"): GREEN,
    ("number", "boolean", "constant"): PURPLE,
    ("operator",): VERMILION,
}

# The workbench's code blocks, laid out as Streamlit's: its monospace font and size, a box in
# the theme's second background, a Copy button in the top right corner.
CODE_BLOCK_CSS = f"""
.{CODE_CLASS} {{ position: relative; margin-bottom: 1rem; }}
.{CODE_CLASS} > pre {{
  margin: 0; padding: 1rem 4.5rem 1rem 1rem; border-radius: 0.5rem; overflow-x: auto;
  font-family: "Source Code Pro", monospace; font-size: 0.875rem; line-height: 1.6;
  white-space: pre; counter-reset: line;
}}
.{CODE_CLASS} > pre > code {{ font-family: inherit; background: none; padding: 0; font-size: inherit; }}
.{CODE_CLASS}.wrapped > pre {{ white-space: pre-wrap; overflow-wrap: anywhere; }}
.{CODE_CLASS}.numbered .line::before {{
  counter-increment: line; content: counter(line); display: inline-block; width: 2.2em;
  margin-right: 1em; text-align: right; user-select: none;
}}
.{CODE_CLASS} > .{COPY_CLASS} {{
  position: absolute; top: 0.5rem; right: 0.5rem; padding: 0.1rem 0.6rem; border-radius: 0.4rem;
  border: 1px solid; font-family: "Source Sans", sans-serif; font-size: 0.8rem; cursor: pointer;
}}"""


def _theme_rules(theme) -> str:
    mark = f'html[{THEME_ATTRIBUTE}="{theme.name}"]'
    muted = muted_text(theme)
    code = f'{mark} [data-testid="stCode"]'
    rules = [f"""
{mark} [data-testid="stCaptionContainer"],
{mark} [data-testid="stCaptionContainer"] code,
{code} .token.comment, {code} .token.punctuation {{ color: {muted}; opacity: 1; }}
{mark} .stSlider [data-testid="stWidgetLabel"][disabled] p,
{mark} [data-testid="stSliderThumbValue"][disabled] p {{ color: {muted}; }}"""]
    block = f"{mark} .{CODE_CLASS}"
    rules.append(f"""
{block} > pre {{ background: {theme.secondary_background}; color: {theme.text}; }}
{block} .tok-comment, {block} .tok-punctuation, {block}.numbered .line::before {{ color: {muted}; }}
{block} > .{COPY_CLASS} {{ color: {theme.text}; background: {theme.background}; border-color: {muted}; }}""")
    for kinds, hue in SYNTAX_HUES.items():
        selectors = ", ".join(f"{code} .token.{kind}" for kind in kinds)
        rules.append(f"\n{selectors}, {block} .tok-{kinds[0]} {{ color: {readable(hue, theme)}; }}")
    ring = focus_ring(theme)
    focused = ", ".join(f"{mark} {selector}" for selector in FOCUSED)
    rules.append(f"""
{focused} {{ outline: 2px solid {ring}; outline-offset: 2px; }}
{mark} #{SKIP_LINK_ID} {{ color: {theme.text}; background: {theme.background}; border-color: {ring}; }}""")
    return "".join(rules)


ACCESSIBLE_CSS = f"""<style>
html[{THEME_ATTRIBUTE}="dark"] [data-testid="stBaseButton-primary"]:not(:disabled),
html[{THEME_ATTRIBUTE}="dark"] [data-testid="stBaseButton-primary"]:not(:disabled) * {{
  color: {DARK.background};
}}
.{SCROLL_X_CLASS} {{ overflow-x: auto; max-width: 100%; }}
{SKIP_LINK_CSS}{TOUCH_TARGETS_CSS}{CODE_BLOCK_CSS}{_theme_rules(LIGHT)}{_theme_rules(DARK)}
</style>"""


REPAIR_KEY = "wb_accessible_repair"


def accessible_theme() -> None:
    """Once per page run, from the router. The script's element is hidden: an element in the
    page's flow, even an empty one, adds a gap above the title (the presenter stage counts it)."""
    # The container's block and the wrapper Streamlit puts around it.
    st.html(ACCESSIBLE_CSS + f"<style>.st-key-{REPAIR_KEY}, :has(> .st-key-{REPAIR_KEY}) "
            "{ display: none; }</style>")
    with st.container(key=REPAIR_KEY):
        st.html(_REPAIR + KEYBOARD_SCRIPT, unsafe_allow_javascript=True)
