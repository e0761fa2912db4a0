"""Learner text shown as plain text: nothing a visitor types, links or uploads becomes Markdown.

Streamlit renders Markdown (with GFM, directives such as `:red[...]`, `:material/...:` icons,
emoji shortcodes and `$...$` LaTeX) in st.markdown, alerts, captions, toasts, and in the labels
of widgets, metrics, expanders and buttons. A value from a URL, a typed program, a shape or an
op chain, or an uploaded file's name goes through one of these before it meets such an element:

- `md(text)`: the text escaped for a Markdown context, so it reads exactly as typed. Every ASCII
  punctuation character gets a backslash (CommonMark hides the backslash), which stops links,
  images, emphasis, headings, lists, tables, code spans, HTML, `<...>` autolinks, directives
  (`:red[...]`), `:material/...:` icons, emoji shortcodes and LaTeX (checked in Chromium against
  Streamlit 1.67). One thing Streamlit's renderer does *after* parsing, on the text itself, is
  not stopped by a backslash: GFM's bare-URL autolinks (`http://...`, `www.x`, `name@host.tld`).
  For those an invisible U+2060 WORD JOINER goes between `:` and `/`, after `@` and inside
  `www.`: it has no width and adds no line-break opportunity, and it breaks the patterns (a
  copied URL carries it, which is fine: it is not meant to be a link). Line breaks and runs of
  whitespace become one space (Markdown would make paragraphs, lists or code blocks of them;
  HTML collapses them anyway).
- `code_span(text)`: the text as an inline code span that the text cannot close (a fence longer
  than any run of backticks in it), for values the page shows as code. Code spans are never
  autolinked; Streamlit rewrites `:material/` even there, so a word joiner keeps it as typed.
- `plotly_text(text)`: for Plotly titles, hover texts and annotations, which interpret a few
  HTML tags (`<a>`, `<b>`, `<br>`, ...): `&`, `<` and `>` become entities.
- `dot_string(text)`: the inside of a double-quoted Graphviz string (quotes, backslashes,
  line breaks), so a label can neither end the string nor use `\\l`-style escapes.

Where no formatting is needed, elements that render no Markdown (st.text, st.code) are better.
This module does not import streamlit, so it is unit-tested directly.
"""
from __future__ import annotations

import re

WORD_JOINER = "\u2060"
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_WHITESPACE = re.compile(r"\s+")
_BACKTICKS = re.compile(r"`+")
_WWW = re.compile(r"(www)(?=\.)", re.IGNORECASE)


def _one_line(text: str) -> str:
    return _WHITESPACE.sub(" ", str(text))


def md(text: object) -> str:
    """`text` for a Markdown element, to be read exactly as typed and never as Markdown."""
    plain = _WWW.sub(r"\1" + WORD_JOINER, _one_line(str(text)))
    out: list[str] = []
    for ch, after in zip(plain, plain[1:] + " ", strict=False):
        if ch in _PUNCTUATION:
            out.append("\\" + ch)
            if ch == "@" or (ch == ":" and after == "/"):
                out.append(WORD_JOINER)
        else:
            out.append(ch)
    return "".join(out)


def code_span(text: object) -> str:
    """`text` as an inline code span it cannot close: it shows in code style, as typed."""
    plain = _one_line(str(text)).replace(":material/", ":" + WORD_JOINER + "material/")
    longest = max((len(run) for run in _BACKTICKS.findall(plain)), default=0)
    fence = "`" * (longest + 1)
    if plain.strip() and (plain[0] == "`" or plain[-1] == "`" or (plain[0] == " " and plain[-1] == " ")):
        plain = f" {plain} "          # CommonMark strips one space on each side
    return f"{fence}{plain or ' '}{fence}"


def plotly_text(text: object) -> str:
    """`text` for a Plotly title, hover text or annotation: no tags, no entities."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def dot_string(text: object) -> str:
    """The inside of a double-quoted DOT string showing `text` literally."""
    return (str(text).replace("\\", "\\\\").replace('"', '\\"')
            .replace("\r\n", " ").replace("\n", " ").replace("\r", " "))


def shorten(text: object, limit: int = 40) -> str:
    """At most `limit` characters of `text`, with `...` when it was cut (before escaping)."""
    value = str(text)
    return value if len(value) <= limit else value[: limit - 3] + "..."
