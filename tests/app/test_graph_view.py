"""components/graph_view.py: graphs laid out by Graphviz's `dot` on the server, the browser's
layout where it is missing. `make test` installs Debian's graphviz; elsewhere (a laptop's
`make check`) the server-side tests are skipped, never in CI."""
from __future__ import annotations

import os
import shutil

import pytest

from components import graph_view
from tests.app.apptest import open_page

DOT = shutil.which("dot")
needs_dot = pytest.mark.skipif(DOT is None and not os.environ.get("CI"),
                               reason="Graphviz's dot is not installed (make test installs it)")
GRAPH = 'digraph g { a [label="x < 1 & <b>"]; a -> b [tooltip="the edge"]; }'


@pytest.fixture
def server_layout(monkeypatch):
    """Undo tests/app/conftest.py's 'no dot here' for this test."""
    assert DOT, "Graphviz's dot is not installed: `make test` installs it (Debian's graphviz)"
    monkeypatch.setattr(graph_view, "dot_program", lambda: DOT)


@needs_dot
def test_dot_lays_the_graph_out_as_svg_that_escapes_its_labels(server_layout):
    svg = graph_view.layout_svg(GRAPH)
    assert svg.startswith("<svg")                      # no XML prolog, no DOCTYPE
    assert "<title>a</title>" in svg and "<title>b</title>" in svg
    assert "x &lt; 1 &amp; &lt;b&gt;" in svg and "<b>" not in svg
    assert 'xlink:title="the edge"' in svg


def test_without_dot_nothing_is_laid_out_on_the_server():
    assert graph_view.layout_svg(GRAPH) is None      # the conftest's default: no dot


@needs_dot
def test_a_graph_dot_cannot_read_is_left_to_the_browser(server_layout):
    assert graph_view.layout_svg("digraph { a -> }") is None


@needs_dot
def test_the_autograd_page_sends_the_laid_out_svg_with_its_label(server_layout):
    at = open_page("app_pages/autograd_graph/page.py")
    assert not at.get("graphviz_chart")
    figures = [m.value for m in at.markdown if 'class="wb-graph"' in m.value]
    assert len(figures) == 1
    figure = figures[0]
    assert figure.startswith('<figure class="wb-graph" aria-label="')
    assert "\n" not in figure                            # one Markdown HTML block
    for node in ("MulBackward0", "AccumulateGrad", "PowBackward0"):
        assert node in figure


def test_without_dot_the_autograd_page_leaves_the_layout_to_the_browser():
    at = open_page("app_pages/autograd_graph/page.py")
    assert "MulBackward0" in at.get("graphviz_chart")[0].proto.spec
    assert not [m for m in at.markdown if 'class="wb-graph"' in m.value]
