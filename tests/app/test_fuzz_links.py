"""Seeded fuzzing of every page's lesson links: no query string may reach the router's guard.

A shared link is untrusted input. Each page is opened once and then fed generated query strings
in turn (as a learner following links inside the app would), drawn from that page's own link
table: valid values, the edges of each range and past them, wrong types, huge and negative
numbers, -0, NaN, empty and unicode text, Markdown and HTML, plus `hide=`, `present=` and
unknown names. Hypothesis is derandomized, so a failure reproduces; FUZZ_EXAMPLES sets how many
queries each page gets (bench/fuzz.py sends thousands against a real server).
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.app.apptest import assert_clean, guard_panels, open_page
from workbench.autograd_graph import settings as autograd_settings
from workbench.batch_iterator import settings as batches
from workbench.moons_trainer import compare as moons_compare
from workbench.moons_trainer import settings as moons
from workbench.tensor_inspector import settings as tensors
from workbench.common.links import (
    BoolParam,
    ChoiceParam,
    ChoiceSetParam,
    FloatParam,
    IntListParam,
    IntParam,
    LinkSchema,
    PointsParam,
    TextParam,
)
from workbench.lessons.settings import TABLE as LESSONS_TABLE

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))
PAGES: dict[str, tuple[str | None, LinkSchema | tuple[LinkSchema, ...]]] = {
    "tensor_inspector": ("app_pages/tensor_inspector/page.py", tensors.TABLE),
    "autograd_graph": ("app_pages/autograd_graph/page.py", autograd_settings.TABLE),
    "moons_trainer": ("app_pages/moons_trainer/page.py", moons.TABLE),
    # A comparison link (`vs=`) with the moons settings it overrides.
    "moons_trainer_vs": ("app_pages/moons_trainer/page.py", (moons.TABLE, moons_compare.TABLE)),
    "batch_iterator": ("app_pages/batch_iterator/page.py", batches.TABLE),
    "lessons": ("app_pages/lessons/page.py", LESSONS_TABLE),
}
PAYLOADS = ["", " ", "-0", "-0.0", "nan", "inf", "-inf", "1e2", "1e400", "0x10", "1_000",
            "4294967296", "-4294967296", "9" * 30, "TRUE", "on", "null", "undefined", "[1,2,3]",
            "()", ",", ",,", "1,,2", "é", "\u202e", "💥", "\x00", "%00",
            "`x` **bold** [link](http://127.0.0.1:9/x)", "![](http://127.0.0.1:9/t.png)",
            "<script>alert(1)</script>", "<img src=http://127.0.0.1:9/i.png>", "# heading",
            ":red[red] :material/home:", "$x^2$"]


def _numbers(lo: float, hi: float, whole: bool) -> st.SearchStrategy[str]:
    inside = st.integers(int(lo), int(hi)) if whole else st.floats(lo, hi, allow_nan=False)
    edges = st.sampled_from([lo, hi, lo - 1, hi + 1, -hi, hi * 10, 0, -0.0])
    return st.one_of(inside.map(str), edges.map(lambda v: str(int(v)) if whole else repr(v)))


def _values(param) -> st.SearchStrategy[str]:
    """Raw URL values for one parameter: mostly near its table, some from anywhere."""
    if isinstance(param, IntParam):
        typed = _numbers(param.lo, param.hi, whole=True)
    elif isinstance(param, FloatParam):
        typed = _numbers(param.lo, param.hi, whole=False)
    elif isinstance(param, BoolParam):
        typed = st.sampled_from(["0", "1", "true", "false", "yes", "2", "-1"])
    elif isinstance(param, ChoiceParam):
        typed = st.sampled_from(param.choices).map(
            lambda c: st.sampled_from([c, c.upper(), c.lower(), f" {c} "])).flatmap(lambda s: s)
    elif isinstance(param, ChoiceSetParam):
        one = st.sampled_from(param.choices).flatmap(
            lambda c: st.sampled_from([c, c.upper(), f" {c} ", c + "x"]))
        typed = st.lists(one, max_size=len(param.choices) + 1).map(",".join)
    elif isinstance(param, IntListParam):
        size = st.one_of(st.integers(param.lo, min(param.hi, 64)),
                         st.sampled_from([param.lo, param.hi, param.hi + 1, -1, 10**12]))
        typed = st.lists(size, max_size=param.max_len + 1).map(lambda xs: ",".join(map(str, xs)))
    elif isinstance(param, moons_compare.OverridesParam):    # `vs=opt:SGD;lr:0.1`
        pair = st.sampled_from(moons.TABLE.params).flatmap(
            lambda p: _values(p).map(lambda v, name=p.name: f"{name}:{v}"))
        typed = st.lists(pair, max_size=3).map(";".join)
    elif isinstance(param, PointsParam):
        # Drawn points: on and off the plane and its grid, few (too few to train: the drawing
        # alone) and many, classes repeated or unknown, pieces missing.
        bound = param.bound
        coordinate = st.one_of(st.floats(-bound, bound, allow_nan=False).map(lambda v: f"{v:.3g}"),
                               st.sampled_from([str(bound), str(-bound), str(bound + 0.1), "1e9",
                                                "nan", "", "-0", "x"]))
        point = st.tuples(coordinate, coordinate).map(",".join)
        group = st.tuples(st.sampled_from(["0", "1", "0", "1", "2", ""]),
                          st.lists(point, max_size=40).map("_".join)).map(":".join)
        typed = st.one_of(st.lists(group, max_size=3).map("~".join), st.just(param.longest()))
    elif isinstance(param, TextParam):
        typed = st.text(max_size=80)
    else:  # pragma: no cover - every kind is listed above
        raise TypeError(param)
    return st.one_of(typed, typed, st.sampled_from(PAYLOADS), st.text(max_size=12))


def _queries(schemas: LinkSchema | tuple[LinkSchema, ...]) -> st.SearchStrategy[dict[str, str]]:
    schemas = schemas if isinstance(schemas, tuple) else (schemas,)
    by_name = {p.name: _values(p) for schema in schemas for p in schema.params}
    names = [name for schema in schemas for name in schema.names]
    extra = {"hide": st.lists(st.sampled_from([*names, "", "zzz"]), max_size=4).map(",".join),
             "present": st.sampled_from(["1", "0", "x", PAYLOADS[-7]]),
             "zzz": st.text(max_size=8)}
    return st.fixed_dictionaries({}, optional={**by_name, **extra})


def _fuzz(page: str):
    script, schema = PAGES[page]
    opened = {}

    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(query=_queries(schema))
    def run(query: dict[str, str]) -> None:
        if "at" not in opened:
            opened["at"] = open_page(script)
        at = opened["at"]
        for name in list(at.query_params):
            del at.query_params[name]
        for name, value in query.items():
            at.query_params[name] = value
        at.run()
        assert_clean(at, query)
        assert not guard_panels(at), (query, guard_panels(at))

    return run


def test_tensor_inspector_links():
    _fuzz("tensor_inspector")()


def test_autograd_graph_links():
    _fuzz("autograd_graph")()


def test_moons_trainer_links():
    _fuzz("moons_trainer")()


def test_moons_trainer_comparison_links():
    _fuzz("moons_trainer_vs")()


@pytest.mark.spawns     # a fuzzed `workers=` starts DataLoader worker processes
def test_batch_iterator_links():
    _fuzz("batch_iterator")()


def test_lessons_links():
    _fuzz("lessons")()
