"""Code on the page, highlighted on the server: what `st.code` shows, without `st.code`'s cost.

`st.code` highlights in the browser with Prism: its code (1.5 MB) is compiled by every new tab
that shows a code block, and its tokenizing takes about 0.3 s of a 2-core laptop's time on a
page with eight blocks; a new learner's tab drew the batch iterator 0.4 s sooner without it
(bench/page_open.py). Pygments (a maintained library, already installed with Streamlit) splits
the code into tokens here, and the page draws plain HTML.

Each block keeps what `st.code` gives a learner: the theme's colours (every kind of token at
least 4.5:1, components/accessible_theme.py), a Copy button (the page's script copies the code's
text, line numbers left out), optional line numbers and wrapping, and keyboard reach when it
scrolls sideways.
"""
from __future__ import annotations

import html

import streamlit as st
from pygments import lex
from pygments.lexers import PythonLexer
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Token

CODE_CLASS = "wb-code"
COPY_CLASS = "wb-copy"

# The kind each Pygments token is drawn as: its class, coloured by accessible_theme.py with the
# hue Streamlit's Prism token of the same group gets (keywords and names of functions and classes
# alike, numbers and constants alike).
_KINDS = (
    (Keyword.Constant, "number"),           # True, False, None
    (Keyword, "keyword"),
    (Name.Function, "keyword"),
    (Name.Class, "keyword"),
    (Name.Builtin, "keyword"),
    (Name.Decorator, "keyword"),
    (String, "string"),
    (Number, "number"),
    (Operator.Word, "keyword"),             # and, or, not, in, is
    (Operator, "operator"),
    (Comment, "comment"),
    (Punctuation, "punctuation"),
)


def _kind(token: type) -> str | None:
    for parent, kind in _KINDS:
        if token in parent:
            return kind
    return None


def highlighted_lines(body: str, language: str = "python") -> list[str]:
    """One HTML string per line of `body`: its tokens in spans named by kind (`tok-keyword`...),
    neighbours of one kind in one span, everything escaped. A token that runs over several lines
    (a docstring) is split at each line end, so every line is a whole element."""
    lines: list[list[tuple[str | None, str]]] = [[]]
    tokens = lex(body.removesuffix("\n"), PythonLexer(stripnl=False, ensurenl=False)) \
        if language == "python" else [(Token.Text, body.removesuffix("\n"))]
    for token, text in tokens:
        kind = "punctuation" if text == "." else _kind(token)    # attribute dots, as Prism
        for number, piece in enumerate(text.split("\n")):
            if number:
                lines.append([])
            if not piece:
                continue
            runs = lines[-1]
            if runs and runs[-1][0] == kind:
                runs[-1] = (kind, runs[-1][1] + piece)
            else:
                runs.append((kind, piece))
    return ["".join(f'<span class="tok-{kind}">{html.escape(text, quote=False)}</span>' if kind
                    else html.escape(text, quote=False) for kind, text in runs) for runs in lines]


def code_html(body: str, language: str = "python", *, line_numbers: bool = False,
              wrap_lines: bool = False, copy_label: str = "Copy code") -> str:
    """The block's HTML: the code in a <pre>, one span per line, and its Copy button, named
    after what it copies ("Copy link" for a link)."""
    classes = " ".join(c for c in (CODE_CLASS, "numbered" if line_numbers else "",
                                   "wrapped" if wrap_lines else "") if c)
    lines = "\n".join(f'<span class="line">{line}</span>' for line in highlighted_lines(body, language))
    return (f'<div class="{classes}" data-language="{html.escape(language)}">'
            f"<pre><code>{lines}</code></pre>"
            f'<button type="button" class="{COPY_CLASS}" data-label="{html.escape(copy_label)}">'
            f"{html.escape(copy_label)}</button>"
            "</div>")


def code_block(body: str, language: str = "python", *, line_numbers: bool = False,
               wrap_lines: bool = False, copy_label: str = "Copy code") -> None:
    """Draw `body` as a code block (the arguments as `st.code`'s)."""
    st.html(code_html(body, language, line_numbers=line_numbers, wrap_lines=wrap_lines,
                      copy_label=copy_label))


def link_block(url: str) -> None:
    """A link to copy (a lesson link, a join link): wrapped, its button "Copy link"."""
    code_block(url, language="text", wrap_lines=True, copy_label="Copy link")
