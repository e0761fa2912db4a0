"""The workbench's code blocks (components/code_block.py): highlighted on the server, escaped,
one element per line, and every kind of token readable in both themes."""
from __future__ import annotations

import html
import re

import pytest

from components.accessible_theme import ACCESSIBLE_CSS, SYNTAX_HUES, THEME_ATTRIBUTE
from components.code_block import CODE_CLASS, COPY_CLASS, code_html, highlighted_lines
from workbench.common.theme import DARK, LIGHT, contrast


def _kinds(line: str) -> dict[str, str]:
    """{token text: kind} of one highlighted line."""
    return {html.unescape(text): kind
            for kind, text in re.findall(r'<span class="tok-(\w+)">([^<]*)</span>', line)}


def test_each_kind_of_token_is_named():
    [line] = highlighted_lines("import torch; x = torch.ones(2) if True else 'a'  # why")
    kinds = _kinds(line)
    assert kinds["import"] == kinds["if"] == kinds["else"] == "keyword"
    assert kinds["2"] == kinds["True"] == "number"
    assert kinds["'a'"] == "string"
    assert kinds["# why"] == "comment"
    assert kinds["="] == "operator"
    assert kinds["."] == kinds["("] == "punctuation"
    assert "torch" not in kinds                   # a plain name keeps the text colour


def test_the_text_of_every_line_is_the_codes_own():
    code = 'def f(x):\n    """Two\n    lines."""\n    return x < 1 and x > -1\n\n'
    lines = highlighted_lines(code)
    plain = [html.unescape(re.sub(r"<[^>]*>", "", line)) for line in lines]
    assert plain == code.removesuffix("\n").split("\n")
    # A docstring over two lines is a string on each: every line is a whole element.
    assert _kinds(lines[1])['"""Two'] == "string" and _kinds(lines[2])['    lines."""'] == "string"


def test_markup_in_code_or_text_is_shown_never_run():
    code = "<script>alert(1)</script> & <b>"
    for language in ("python", "text"):
        block = code_html(code, language)
        assert "<script" not in block and "<b>" not in block
        [line] = highlighted_lines(code, language)
        assert html.unescape(re.sub(r"<[^>]*>", "", line)) == code
    assert "tok-" not in code_html("if x: pass", "text")      # text is not highlighted


def test_a_block_has_its_copy_button_and_its_options_as_classes():
    block = code_html("x = 1", line_numbers=True, wrap_lines=True)
    assert block.startswith(f'<div class="{CODE_CLASS} numbered wrapped"')
    assert (f'<button type="button" class="{COPY_CLASS}" data-label="Copy code">Copy code</button>'
            in block)
    # A link's button says what it copies; the label is text, never markup.
    link = code_html("https://x/?a=1", "text", copy_label="Copy link")
    assert 'data-label="Copy link">Copy link</button>' in link
    assert "<i>" not in code_html("x", copy_label="<i>Copy</i>")
    assert code_html("x = 1").startswith(f'<div class="{CODE_CLASS}" ')


def _rule_colour(selector: str) -> str:
    """The colour ACCESSIBLE_CSS gives `selector` (one selector of a rule's list)."""
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", ACCESSIBLE_CSS):
        if selector in [s.strip() for s in selectors.split(",")]:
            found = re.search(r"(?<![-\w])color:\s*(#[0-9A-Fa-f]{6})", body)
            if found:
                return found.group(1)
    raise AssertionError(f"no colour for {selector}")


@pytest.mark.parametrize("theme", [LIGHT, DARK], ids=lambda t: t.name)
def test_every_kind_of_token_reads_at_4_5_to_1_on_the_blocks_background(theme):
    block = f'html[{THEME_ATTRIBUTE}="{theme.name}"] .{CODE_CLASS}'
    background = theme.secondary_background
    kinds = [kinds[0] for kinds in SYNTAX_HUES] + ["comment", "punctuation"]
    for kind in kinds:
        colour = _rule_colour(f"{block} .tok-{kind}")
        assert contrast(colour, background) >= 4.5, (theme.name, kind, colour)
    assert contrast(_rule_colour(f"{block} > pre"), background) >= 4.5
    assert contrast(_rule_colour(f"{block}.numbered .line::before"), background) >= 4.5


def test_a_planted_low_contrast_colour_fails_the_check():
    assert contrast("#AAAAAA", LIGHT.secondary_background) < 4.5
