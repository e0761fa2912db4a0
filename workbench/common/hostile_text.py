"""Text that a shared link may carry where no settings table expects it: what the link fuzzers
(tests/app/test_fuzz_links.py, bench/fuzz.py) mix into every parameter's examples
(`Param.example` in links.py).

Numbers that break a parser or a range (signed zero, NaN, infinity, overflow of int64 and of a
float, other digit systems), separators a hand-typed link repeats or swaps, and what a page could
render if it echoed the value (Markdown, HTML, LaTeX, Streamlit's own `:colour[...]` and icons,
format strings), plus the lengths and bytes that test a cap: a NUL, a right-to-left override.
Hosts in links point at port 9 of the loopback (discard): nothing is ever fetched.
"""
from __future__ import annotations

import random

HOSTILE: tuple[str, ...] = (
    # numbers: signs, zeros, non-finite, overflow, other spellings and digit systems
    "", " ", "-0", "+0", "0", "-0.0", "-1", "nan", "NaN", "-nan", "inf", "-inf", "Infinity",
    "1e2", "1e3", "1e309", "-1e309", "1e400", "1e-320", "0x10", "0b1", "1_000", ".5", "5.", "1/2",
    "4294967296", "-4294967296", "9" * 30, "9" * 40, "-" + "9" * 40, "9" * 400,
    "٣", "４２", "①",
    # words where a number or a choice is expected
    "true", "TRUE", "on", "None", "null", "undefined", "abc", "ß", "İ", "é",
    # separators and brackets a hand-typed link gets wrong
    "1,2", "1,,2", ",", ",,", "()", "[]", "[1,2,3]", "{}", "%", "%%", "%00", "&", "=", "?", "#x",
    "+", "\\", "'", '"', "\t1\n",
    # bytes and characters that test the text path
    "a\u0000b", "\x00", "\u202e", "\u202eevil", "😀", "💥",
    # what a page could render if it echoed the value
    "<script>alert(1)</script>", "<img src=x onerror=alert(1)>",
    "<img src=http://127.0.0.1:9/i.png>", "**bold** _it_", "`x` **bold** [link](http://127.0.0.1:9/x)",
    "![](http://127.0.0.1:9/t.png)", "[x](javascript:alert(1))", "# heading", "`code`",
    "```\nblock\n```", ":material/error:", ":red[red] :material/home:", "$x^2$", "$$\\frac{1}{0}$$",
    "{capacity}", "%s%s%n", "../../etc/passwd",
    # longer than any parameter accepts (links.MAX_RAW_LENGTH is 4,000)
    "x" * 5000,
)


def random_text(rng: random.Random, most: int) -> str:
    """Up to `most` characters: mostly printable ASCII, then anything in the Basic Multilingual
    Plane below the surrogates (controls included), then the planes above it."""
    chars = []
    for _ in range(rng.randint(0, most)):
        block = rng.random()
        if block < 0.6:
            code = rng.randint(0x20, 0x7E)
        elif block < 0.9:
            code = rng.randint(0, 0xD7FF)
        else:
            code = rng.randint(0xE000, 0x10FFFF)
        chars.append(chr(code))
    return "".join(chars)
