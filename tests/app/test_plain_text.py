"""Nothing a visitor links or types comes back as Markdown: every page, every URL parameter.

Each page runs once per payload rotation: parameter i of the page gets payload (i + r), so over
the rotations every parameter carries every payload of tests/markdown_payloads.py. Every string
the page sends to the browser that Streamlit renders as Markdown (bodies, labels, options, help,
table cells) is checked for a live payload construct.
"""
from __future__ import annotations

import functools
import io
import json
from pathlib import Path

import pytest
import torch
from google.protobuf.message import Message

from app_pages.navigation import HOME, LESSONS_PAGE
from tests.app.apptest import code_blocks, assert_clean, open_page
from tests.markdown_payloads import PAYLOADS, SESSION_EXPIRED, live_markdown, visible_text
from workbench.tools import AUTOGRAD_GRAPH, TENSOR_INSPECTOR, TOOLS

# Elements whose strings are shown verbatim, never as Markdown (or are not shown at all).
_VERBATIM = {"Code", "Text", "Json", "GraphVizChart", "PlotlyChart", "ArrowNamedDataFrame", "Arrow",
             "Html", "Empty"}
_PICTURES = {"GraphVizChart", "PlotlyChart"}
_SKIP_FIELDS = {"id", "form_id", "default", "value", "placeholder", "script_hash", "page",
                "query_string", "url", "data", "spec", "icon"}


def _schemas() -> dict[str, tuple[str, ...]]:
    """Every page's link parameters: home has none, then the lessons and each tool's tables."""
    from workbench.lessons.settings import TABLE as LESSONS_TABLE

    return {HOME.script: (), LESSONS_PAGE.script: LESSONS_TABLE.names} | {
        tool.script: tuple(name for table in tool.link_tables.values() for name in table.names)
        for tool in TOOLS}


PAGES = _schemas()
# Free text these parameters accept as valid: it is shown in st.code (program, op chain).
ACCEPTED = {(AUTOGRAD_GRAPH.script, "code"), (TENSOR_INSPECTOR.script, "ops")}
CASES = [(script, name) for script, names in PAGES.items() for name in (*names, "present", "hide")]


def _items(value) -> list:
    return [value] if isinstance(value, str | Message) else list(value)


def _proto_strings(message, out: list[str]) -> None:
    for field, value in message.ListFields():
        if field.name in _SKIP_FIELDS:
            continue
        if field.type == field.TYPE_MESSAGE:
            for item in _items(value):
                if type(item).__name__ not in _VERBATIM:
                    _proto_strings(item, out)
        elif field.type == field.TYPE_STRING:
            out.extend(_items(value))


def rendered_strings(at, pictures: list[str] | None = None) -> tuple[list[str], list[str]]:
    """(strings Streamlit renders as Markdown, strings it shows verbatim) of the whole page;
    the specs of Plotly charts and DOT graphs are added to `pictures`."""
    pictures = [] if pictures is None else pictures
    markdown: list[str] = []
    verbatim: list[str] = []
    for node in at._tree:
        proto = getattr(node, "proto", None)
        if proto is None:
            continue
        if type(proto).__name__ in _VERBATIM:
            _proto_strings_all(proto, verbatim)
            if type(proto).__name__ in _PICTURES:
                _proto_strings_all(proto, pictures)
        else:
            _proto_strings(proto, markdown)
    for table in at.table:
        markdown.extend(str(cell) for cell in table.value.to_numpy().ravel())
        markdown.extend(str(column) for column in table.value.columns)
    return markdown, verbatim


def _proto_strings_all(message, out: list[str]) -> None:
    for field, value in message.ListFields():
        if field.type == field.TYPE_STRING:
            out.extend(_items(value))


def assert_plain(at, what: str) -> list[str]:
    assert_clean(at, what)
    pictures: list[str] = []
    markdown, verbatim = rendered_strings(at, pictures)
    live = [(text, live_markdown(text)) for text in markdown if live_markdown(text)]
    assert not live, f"{what}: live Markdown {live}"
    for text in pictures:                      # Plotly and DOT: no payload tags either
        if "PWN" in text:
            assert "<b>PWN" not in text and "<img" not in text.lower(), (what, text[:300])
    return markdown + verbatim


def _query(names: tuple[str, ...], rotation: int) -> dict[str, str]:
    return {name: PAYLOADS[(i + rotation) % len(PAYLOADS)] for i, name in enumerate(names)}


@functools.cache
def _runs(script: str) -> tuple[tuple[dict[str, str], tuple[str, ...]], ...]:
    names = (*PAGES[script], "present", "hide")
    runs = []
    at = open_page(None if script == "app_pages/home/page.py" else script)
    for rotation in range(len(PAYLOADS)):
        query = _query(names, rotation)
        for name, value in query.items():      # the session follows a new lesson link: a rerun
            at.query_params[name] = value
        at.run()
        runs.append((query, tuple(assert_plain(at, f"{script} {query}"))))
    return tuple(runs)


@pytest.mark.parametrize(("script", "param"), CASES,
                         ids=[f"{Path(s).stem}-{p}" for s, p in CASES])
def test_link_values_never_render_as_markdown(script, param):
    for query, shown in _runs(script):
        if param == "hide" or (script, param) in ACCEPTED:
            continue          # hide: names only, never echoed; accepted text goes to st.code
        named = f"{param}=" + " ".join(query[param].split())[:10]
        assert any(named in visible_text(text) for text in shown), f"{named!r} not named on {script}"


def test_the_briefs_session_expired_link_is_plain_text():
    at = open_page(query={"present": SESSION_EXPIRED})
    shown = assert_plain(at, "present")
    warning = next(text for text in shown if "present=" in text)
    assert "Your session expired." in visible_text(warning)


# --- typed input ---------------------------------------------------------------------------

def test_typed_shape_chain_step_and_shapes_are_plain_text():
    at = open_page("app_pages/tensor_inspector/page.py")
    at.text_input(key="ti_shape").set_value(PAYLOADS[1]).run()
    assert_plain(at, "shape")
    assert any("PWNlink" in e.value for e in at.error)       # the form reports a bad shape
    at.text_input(key="ti_add_args").set_value("0" + PAYLOADS[0]).run()
    at.button(key="ti_append").click().run()
    assert_plain(at, "appended step")
    assert any("cannot be added" in w.value and "PWNbold" in w.value for w in at.warning)
    at.text_input(key="ti_lhs").set_value(PAYLOADS[2]).run()
    at.text_input(key="ti_rhs").set_value(PAYLOADS[3]).run()
    assert_plain(at, "lhs/rhs")
    at.text_input(key="ti_ops").set_value("t()" + PAYLOADS[6]).run()
    assert_plain(at, "ops")


def test_typed_program_strings_comments_and_errors_are_plain_text():
    program = ('w = torch.tensor(3.0, requires_grad=True)\n'
               'print("**PWNbold** [PWNlink](http://127.0.0.1:9/)")  # ![PWNimg](http://127.0.0.1:9/i.png)\n'
               'L = w ** 2\n'
               'print("<img src=http://127.0.0.1:9/h.png> # PWNhead :red[PWNred]")\n'
               'z = torch.zeros("x` **PWNbold** `")\n')
    at = open_page("app_pages/autograd_graph/page.py", query={"code": program})
    shown = assert_plain(at, "program")
    printed = "\n".join(c for c in code_blocks(at))
    assert '**PWNbold** [PWNlink](http://127.0.0.1:9/)' in printed
    assert any("PWN" in text for text in shown)
    refused = open_page("app_pages/autograd_graph/page.py",
                        query={"code": "x = 1\n" + '_PWN = "[PWNlink](http://127.0.0.1:9/l)"'})
    assert_plain(refused, "refused program")


def test_typed_hidden_layers_are_plain_text():
    at = open_page("app_pages/moons_trainer/page.py")
    at.text_input(key="mt_hidden").set_value(PAYLOADS[0]).run()
    assert_plain(at, "hidden")
    assert any("PWNbold" in e.value for e in at.error)


def _state_dict_bytes() -> bytes:
    from workbench.moons_trainer.settings import MoonsSettings
    from workbench.moons_trainer.training import TrainingSession

    session = TrainingSession(MoonsSettings(), "cpu")
    buffer = io.BytesIO()
    torch.save(session.model.state_dict(), buffer)
    return buffer.getvalue()


@pytest.mark.parametrize(("content", "name"), [
    ("valid", "[PWNlink](http:__127.0.0.1:9)**PWNbold**.pt"),
    ("valid", "x` [PWNlink](http:__127.0.0.1:9) **PWNbold** `.pt"),
    ("refused", "x` ![PWNimg](http:__127.0.0.1:9_i.png) `.pt"),
])
def test_uploaded_file_names_are_plain_text(content, name):
    data = _state_dict_bytes() if content == "valid" else json.dumps({"not": "a checkpoint"}).encode()
    at = open_page("app_pages/moons_trainer/page.py")
    at.file_uploader(key="mt_upload").upload(name, data).run()
    shown = assert_plain(at, f"upload ({content})")
    if content == "valid":
        assert any("Loaded" in text and "PWNlink" in text for text in shown)
