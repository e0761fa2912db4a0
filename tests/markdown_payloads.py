"""Markdown and HTML payloads for lesson links and typed input, and a check that none is live.

Every payload names the host 127.0.0.1:9 (nothing listens there) and carries a word starting with
PWN, so a test can tell the payload's text from the page's own. Each is at most 37 characters:
a link problem shows at most the first 37 characters of a bad value.
"""
from __future__ import annotations

import re

HOST = "127.0.0.1:9"

PAYLOADS = (
    "x` **PWNbold** `y",                       # closes a one-backtick code span, then bold
    f"[PWNlink](http://{HOST}/l)",             # a link
    f"![PWNimg](http://{HOST}/i.png)",         # an image: the browser would fetch it
    "# PWNhead _PWNem_ <b>PWNtag</b>",         # heading, emphasis, an HTML tag
    f"<img src=http://{HOST}/h.png>",          # raw HTML image
    f"<http://{HOST}/a> PWNauto",              # an autolink
    f"http://{HOST}/b PWNbare",                # a bare URL (GFM autolinks it)
    ":red[PWNred]:material/home:$PWNmath$",    # directive, icon, LaTeX
    "PWNtable | a\n---|---\n- PWNlist",        # table and list syntax across lines
)

# The brief's own examples, longer than the 37 characters a link problem shows.
SESSION_EXPIRED = f"x` **Your session expired.** [Sign in again to keep your work](http://{HOST}/login)"
TRACKING_PIXEL = f"` ![](http://{HOST}/t.png) `"

_ESCAPED = re.compile(r"\\[!-/:-@\[-`{-~]")
_BACKTICKS = re.compile(r"`+")
# Live forms of the payloads, looked for after escaped characters and code spans are removed.
_LIVE = {
    "link or image to the payload host": re.compile(r"\]\(\s*<?https?://127\.0\.0\.1:9", re.I),
    "bare or angle-bracket URL of the payload host": re.compile(r"https?://127\.0\.0\.1:9", re.I),
    "HTML tag": re.compile(r"<\s*(img|b|a|script|iframe|svg)\b", re.I),
    "emphasis": re.compile(r"(\*\*?|__?)PWN"),
    "heading": re.compile(r"(^|\n)[ \t]{0,3}#{1,6}[ \t]+PWN"),
    "directive": re.compile(r":[a-z-]+\[PWN"),
    "material icon": re.compile(r":material/home:"),
    "LaTeX": re.compile(r"\$PWN"),
    "table or list": re.compile(r"(^|\n)\s*(\||-{3}|[-+*][ \t]+PWN)"),
}


def strip_code_spans(text: str) -> str:
    """`text` without its CommonMark code spans (a run of n backticks up to the next run of n)."""
    out, position = [], 0
    runs = list(_BACKTICKS.finditer(text))
    i = 0
    while i < len(runs):
        opening = runs[i]
        closing = next((j for j in range(i + 1, len(runs)) if len(runs[j].group()) == len(opening.group())),
                       None)
        if closing is None:
            i += 1
            continue
        out.append(text[position:opening.start()])
        out.append("\x00")
        position = runs[closing].end()
        i = closing + 1
    out.append(text[position:])
    return "".join(out)


def live_markdown(markdown: str) -> list[str]:
    """The payload constructs that `markdown` would render (empty when it is plain text)."""
    if "PWN" not in markdown and HOST not in markdown.replace("\u2060", ""):
        return []
    # A backslash before a backtick is an escape outside code spans only; Streamlit's own text
    # never puts one inside a code span, so escapes are removed first.
    rest = strip_code_spans(_ESCAPED.sub("\x00", markdown))
    return [name for name, pattern in _LIVE.items() if pattern.search(rest)]


def visible_text(markdown: str) -> str:
    """What a reader sees of escaped text: backslash escapes and word joiners removed."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace("\u2060", "")
