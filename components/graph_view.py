"""A graphviz graph, laid out on the server when Graphviz's `dot` program is installed there.

`st.graphviz_chart` lays the DOT text out in the browser (Graphviz compiled to WebAssembly), on
the page's one main thread, every time a rerun sends it: about 0.6 s for the autograd page's
graph on a 2-core machine, during which the browser draws nothing else, so each Next node waited
for it. The `dot` program lays the same graph out in a few milliseconds on the server, and the
browser only inserts the SVG it wrote. Debian's `graphviz` package provides it (`packages.txt` on
Community Cloud, the Dockerfile, `make test`); where it is missing the browser lays the graph out
as before, and the picture is the same.

The SVG keeps Graphviz's own markup (`g.node`, `<title>` with the node's name, tooltips as link
titles), so what reads the drawing in the browser reads either kind.
"""
from __future__ import annotations

import functools
import html
import re
import shutil
import subprocess

import streamlit as st

GRAPH_CLASS = "wb-graph"
# The graph's <svg> in the page, whichever way it was laid out (for a page's own CSS).
GRAPH_SVG = f':is(.{GRAPH_CLASS}, [data-testid="stGraphVizChart"]) svg'
# As st.graphviz_chart draws it: never wider than the column, the height following the width. A
# rule (not the element's style attribute) so that a page's more specific rules win; inside the
# figure, so that it arrives with the drawing.
_GRAPH_CSS = (f"<style>.{GRAPH_CLASS} {{ margin: 0; }} "
              f".{GRAPH_CLASS} svg {{ max-width: 100%; height: auto; }}</style>")
# Bounds on the server's work for one graph, whatever a learner's program records: a layout that
# would take longer (a 100-round loop with its saved tensors took dot over a minute) or a DOT text
# that is larger is left to the learner's browser. A refused text is remembered (the cache below),
# so the page's reruns do not try it again.
_LAYOUT_SECONDS = 2.0
MAX_DOT_CHARS = 60_000
# The XML prolog, DOCTYPE and comments before <svg>: not HTML, and nothing the browser needs.
_PROLOG = re.compile(r"^.*?(?=<svg)", re.DOTALL)


def dot_program() -> str | None:
    return shutil.which("dot")


def layout_svg(dot: str) -> str | None:
    """The graph as SVG from the `dot` program, or None where it is missing or fails (the browser
    then lays it out)."""
    program = dot_program()
    if program is None or len(dot) > MAX_DOT_CHARS:
        return None
    return _run_dot(program, dot)


# Cached: stepping back and forth through a walk asks for the same few texts again and again.
@functools.lru_cache(maxsize=256)
def _run_dot(program: str, dot: str) -> str | None:
    try:
        done = subprocess.run([program, "-Tsvg"], input=dot.encode(), capture_output=True,
                              timeout=_LAYOUT_SECONDS, check=True)
    except (OSError, subprocess.SubprocessError):   # missing, refused the text, or out of time
        return None
    return _PROLOG.sub("", done.stdout.decode("utf-8"), count=1)


def show_graph(dot: str, *, label: str) -> None:
    """Draw `dot`; `label` names the figure for assistive technology."""
    svg = layout_svg(dot)
    if svg is None:
        st.graphviz_chart(dot, width="content")
        return
    # The drawing is one image to assistive technology, named `label`: read box by box, it
    # would be Graphviz's node ids and labels in file order (a page gives its text alternative
    # beside it).
    name = html.escape(label)
    svg = svg.replace("<svg ", f'<svg role="img" aria-label="{name}" ', 1)
    # st.markdown, not st.html: st.html's sanitizer removes SVG. Graphviz escapes every label. On
    # one line, the figure is one HTML block: Markdown ends a block at a blank line.
    st.markdown(f'<figure class="{GRAPH_CLASS}" aria-label="{name}">'
                f'{_GRAPH_CSS}{svg.replace(chr(10), " ")}</figure>', unsafe_allow_html=True)
