"""Ending a class in Chromium, on a 390x844 phone (issue 42): *End the class…* asks first and
says what it deletes; the class's data downloads as a CSV built on the server when the button is
pressed (AppTest cannot press a download); *Yes, end …* deletes it and the teacher reads a
teacher's message."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from harness.chromium import open_path, wait_drawn
from harness.stage import clipped_texts
from workbench.classroom.store import RunEntry

pytestmark = pytest.mark.e2e


def test_a_teacher_downloads_the_class_data_then_ends_the_class_on_a_phone(browser, app_url, tmp_path):
    from components.class_session import class_store     # the server's store (tests/conftest.py)

    context = browser.new_context(viewport={"width": 390, "height": 844}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        open_path(page, app_url, "/class")
        page.get_by_role("button", name="Start a class").click()
        code_element = page.locator(".class-code")
        expect(code_element).to_have_text(re.compile(r"^[A-Z0-9]{6}$"))
        code = code_element.inner_text().strip()
        page.wait_for_function("() => document.cookie.includes('workbench_class_teacher=')")
        key = page.evaluate("() => document.cookie.split('; ').find(c => "
                            "c.startsWith('workbench_class_teacher=')).split('.').slice(1).join('.')")
        store = class_store()
        member = store.join(code, "-Ada")
        store.post_run(code, member.token, RunEntry("/moons_trainer?hidden=8", "SGD", 0.1, 0.9,
                                                    0.955, 41))

        page.get_by_text("End the class", exact=True).click()        # the expander
        page.get_by_role("button", name="End the class…").click()
        warning = page.locator("[data-testid=stAlert]").filter(has_text=f"Ending class {code}")
        expect(warning).to_contain_text("1 member(s)")
        expect(warning).to_contain_text("1 posted run(s)")
        wait_drawn(page)
        confirm = page.get_by_role("button", name=f"Yes, end class {code} and delete its data")
        confirm.scroll_into_view_if_needed()
        assert clipped_texts(confirm) == []
        box = confirm.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 391, f"cut on the phone: {box}"

        with page.expect_download() as downloading:
            page.get_by_role("button", name="Download the class's data (CSV)").click()
        saved = Path(tmp_path) / "class.csv"
        downloading.value.save_as(saved)
        text = saved.read_text()
        assert text.startswith(f"Class {code}\n"), text[:200]
        assert "\n'-Ada," in text and "/moons_trainer?hidden=8" in text, text
        assert store.check_teacher(code, key) == code                 # nothing deleted yet

        confirm.click()
        expect(page.get_by_text(f"Class {code} ended; its data is deleted.")).to_be_visible()
        expect(page.get_by_role("button", name="Start a class")).to_be_visible()
        assert not page.get_by_text("check the code with your teacher").count()
    finally:
        context.close()
