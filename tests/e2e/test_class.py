"""A class in Chromium on one server: the scenario of tests/e2e/class_scenario.py (a teacher and
three learners in browser contexts of their own: answers counted live, a reload keeping its seat,
a posted run reproduced by its link, follow the teacher). tests/e2e/test_proxy.py runs the same
scenario through the two-replica proxy on PostgreSQL."""
from __future__ import annotations

import pytest

from tests.e2e.class_scenario import teach_a_class

pytestmark = pytest.mark.e2e


def test_a_teacher_and_three_learners_run_a_class(browser, app_url, servers_store):
    contexts = []

    def new_page(width: int, height: int, who: str):
        context = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(60_000)
        return page

    try:
        teach_a_class(new_page, app_url, servers_store)
    finally:
        for context in contexts:
            context.close()
