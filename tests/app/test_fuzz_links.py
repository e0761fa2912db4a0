"""Seeded fuzzing of every page's lesson links: no query string may reach the router's guard.

A shared link is untrusted input. Each page is opened once and then fed generated query strings
in turn (as a learner following links inside the app would), drawn from that page's own link
tables: each parameter's own examples (`Param.example` in workbench/common/links.py: valid
values, the edges of each range and past them, wrong types, huge and negative numbers, -0, NaN,
empty and unicode text, Markdown and HTML), plus `hide=`, `present=` and unknown names. The
pages are the tools' records (workbench/tools.py: each tool's settings table, and again with
each further table its page reads, such as the moons trainer's `vs=`), home with no table and
the lessons. Hypothesis is derandomized and drives each parameter's examples through
`st.randoms(use_true_random=False)`, so a failure reproduces and shrinks; FUZZ_EXAMPLES sets how
many queries each page gets (`python -m bench.fuzz` sends thousands against a real server, drawn
from the same examples).
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app_pages.navigation import LESSONS_PAGE
from tests.app.apptest import assert_clean, guard_panels, open_page
from workbench.common.links import LinkSchema
from workbench.lessons.settings import TABLE as LESSONS_TABLE
from workbench.tools import BATCH_ITERATOR, TOOLS

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))
MARKDOWN_LINK = "`x` **bold** [link](http://127.0.0.1:9/x)"


def _pages():
    """(page script, its link tables) for every page, named by its path and tables."""
    yield pytest.param(None, (), id="home")         # the router's default page: no table of its own
    for tool in TOOLS:
        # A fuzzed `workers=` starts DataLoader worker processes.
        marks = [pytest.mark.spawns] if tool is BATCH_ITERATOR else []
        yield pytest.param(tool.script, (tool.settings,), id=tool.url_path, marks=marks)
        for name, table in tool.extra_links:  # e.g. a comparison link with the settings it overrides
            yield pytest.param(tool.script, (tool.settings, table), id=f"{tool.url_path}+{name}",
                               marks=marks)
    yield pytest.param(LESSONS_PAGE.script, (LESSONS_TABLE,), id=LESSONS_PAGE.url_path)


def _queries(schemas: tuple[LinkSchema, ...]) -> st.SearchStrategy[dict[str, str]]:
    by_name = {p.name: st.randoms(use_true_random=False).map(p.example)
               for schema in schemas for p in schema.params}
    names = [name for schema in schemas for name in schema.names]
    extra = {"hide": st.lists(st.sampled_from([*names, "", "zzz"]), max_size=4).map(",".join),
             "present": st.sampled_from(["1", "0", "x", MARKDOWN_LINK]),
             "zzz": st.text(max_size=8)}
    return st.fixed_dictionaries({}, optional={**by_name, **extra})


@pytest.mark.parametrize(("script", "schemas"), list(_pages()))
def test_no_generated_link_reaches_the_guard(script: str | None, schemas: tuple[LinkSchema, ...]):
    opened = {}

    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(query=_queries(schemas))
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

    run()
