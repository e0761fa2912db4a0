"""components/plain_text.py: learner text escaped for Markdown, code spans, Plotly and DOT."""
from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.plain_text import WORD_JOINER, code_span, dot_string, md, plotly_text, shorten
from tests.markdown_payloads import PAYLOADS, live_markdown, strip_code_spans, visible_text

CONSTRUCTS = {
    "link": "[text](http://127.0.0.1:9/x)",
    "image": "![](http://127.0.0.1:9/t.png)",
    "bold": "**PWNbold**",
    "emphasis": "_PWNem_ and *PWNem*",
    "heading": "# PWNhead",
    "setext heading": "PWNhead\n===",
    "html tag": "<b>PWNtag</b><img src=x>",
    "autolink": "<http://127.0.0.1:9/a>",
    "bare url": "http://127.0.0.1:9/b",
    "www": "www.example.com",
    "email": "a@example.com",
    "code span": "`PWNcode`",
    "closing backticks": "x` **PWNbold** `y",
    "table": "PWNtable | a\n---|---\n1 | 2",
    "list": "- PWNlist\n1. PWNone",
    "quote": "> PWNquote",
    "material icon": ":material/home:",
    "colour": ":red[PWNred] :blue-background[PWNblue]",
    "latex": "$PWNmath$ and $$x$$",
    "strikethrough": "~~PWNdel~~",
    "entity": "&amp; &lt;b&gt;",
    "backslash": "a\\*b\\",
}


@pytest.mark.parametrize("text", CONSTRUCTS.values(), ids=CONSTRUCTS.keys())
def test_md_escapes_every_construct_and_reads_as_typed(text):
    escaped = md(text)
    assert not live_markdown(escaped)
    assert visible_text(escaped) == re.sub(r"\s+", " ", text)
    # Every ASCII punctuation character is escaped; nothing else gains a backslash.
    unescaped = re.sub(r"\\[!-/:-@\[-`{-~]", "", escaped)
    assert not re.search(r"[!-/:-@\[-`{-~]", unescaped), unescaped


def test_md_breaks_the_autolinks_streamlit_finds_after_parsing():
    assert md("http://h") == f"http\\:{WORD_JOINER}\\/\\/h"
    assert md("www.x.org").startswith(f"www{WORD_JOINER}\\.")
    assert md("WWW.x.org").startswith(f"WWW{WORD_JOINER}\\.")
    assert md("a@b.co") == f"a\\@{WORD_JOINER}b\\.co"
    assert WORD_JOINER not in md("ratio 3:2, time 10:30")      # only `:` before `/` is joined


def test_md_keeps_the_visible_text_of_ordinary_words():
    assert md("`x` * `2`") == "\\`x\\` \\* \\`2\\`"
    assert visible_text(md("`x` * `2`")) == "`x` * `2`"
    assert md("expected a whole number from 1 to 10") == "expected a whole number from 1 to 10"
    assert md("héllo wörld 😀") == "héllo wörld 😀"
    assert md("two\n\nlines\tand  spaces") == "two lines and spaces"


@pytest.mark.parametrize("text", [*PAYLOADS, "", " ", "`", "``", "a`b", "```x```", " x ", "a\nb"])
def test_code_span_cannot_be_closed_by_its_content(text):
    span = code_span(text)
    assert strip_code_spans(span) == "\x00"                # one code span, nothing after it
    fence = re.match(r"`+", span).group()
    inner = span[len(fence):-len(fence)]
    if inner.startswith(" ") and inner.endswith(" ") and inner.strip():
        inner = inner[1:-1]                                # CommonMark strips one space each side
    assert inner.replace(WORD_JOINER, "") == (re.sub(r"\s+", " ", text) or " ")


def test_code_span_keeps_material_shortcodes_as_typed():
    # Streamlit rewrites `:material/` before parsing, even inside code spans.
    assert code_span(":material/home:") == f"`:{WORD_JOINER}material/home:`"


@given(st.text(max_size=60).filter(lambda t: WORD_JOINER not in t))
def test_md_escapes_all_punctuation_of_any_text(text):
    escaped = md(text)
    assert "\n" not in escaped
    assert visible_text(escaped) == re.sub(r"\s+", " ", text)
    assert not re.search(r"[!-/:-@\[-`{-~]", re.sub(r"\\[!-/:-@\[-`{-~]", "", escaped))


@given(st.text(max_size=60))
def test_code_span_is_always_one_span(text):
    assert strip_code_spans(code_span(text)) == "\x00"


def test_plotly_text_leaves_no_tags():
    assert plotly_text('<a href="http://127.0.0.1:9">x</a><br><b>y</b> & z') == (
        '&lt;a href="http://127.0.0.1:9"&gt;x&lt;/a&gt;&lt;br&gt;&lt;b&gt;y&lt;/b&gt; &amp; z')


def test_dot_string_cannot_end_the_string_or_use_escapes():
    text = 'a" ] ; evil [label="x\\l\\N\nz'
    escaped = dot_string(text)
    assert re.search(r'(?<!\\)(\\\\)*"', escaped) is None   # no unescaped quote
    assert "\n" not in escaped
    assert escaped == 'a\\" ] ; evil [label=\\"x\\\\l\\\\N z'


def test_shorten():
    assert shorten("x" * 40) == "x" * 40
    assert shorten("x" * 41) == "x" * 37 + "..."
