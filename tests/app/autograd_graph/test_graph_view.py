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


def test_a_graph_past_the_size_bound_is_not_sent_to_dot(server_layout, monkeypatch):
    calls = []
    monkeypatch.setattr(graph_view, "_run_dot", lambda program, dot: calls.append(dot))
    big = "digraph g { " + " ".join(f"n{i} -> n{i + 1};" for i in range(6000)) + " }"
    assert len(big) > graph_view.MAX_DOT_CHARS
    assert graph_view.layout_svg(big) is None and calls == []
    graph_view.layout_svg(GRAPH)
    assert calls == [GRAPH]


@needs_dot
def test_a_layout_past_the_time_bound_is_given_up_and_remembered(server_layout, monkeypatch):
    monkeypatch.setattr(graph_view, "_LAYOUT_SECONDS", 0.001)
    graph_view._run_dot.cache_clear()
    slow = "digraph g { " + " ".join(f"n{i} -> n{(i * 7) % 300};" for i in range(300)) + " }"
    assert graph_view.layout_svg(slow) is None
    assert graph_view._run_dot.cache_info().currsize == 1     # not tried again on the next rerun
    graph_view._run_dot.cache_clear()


@needs_dot
def test_the_svg_export_is_the_drawing_and_a_giant_graph_says_why_there_is_none(server_layout):
    at = open_page("app_pages/autograd_graph/page.py")
    assert [b for b in at.get("download_button") if b.proto.label == "Graph as SVG"]
    loop = ("x = torch.ones(3, requires_grad=True)\ny = x\nfor i in range(100):\n"
            "    y = (y * x).sin() + x.exp()\nL = y.sum()\n")
    at = open_page("app_pages/autograd_graph/page.py", query={"code": loop, "saved": "1"})
    assert not [b for b in at.get("download_button") if b.proto.label == "Graph as SVG"]
    assert any("too big to lay out on the server" in c.value for c in at.caption)
