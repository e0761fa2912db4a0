"""Ending a class and pacing its checks in Chromium (issues 42 and 45). On a 390x844 phone:
*End the class…* asks first and says what ending does; the report downloads as HTML and CSV,
built on the server when a button is pressed (AppTest cannot press a download); *Yes, end …*
keeps the report, which is still there after a reload, and *Delete now* deletes it. A learner's
open page learns that the teacher closed a check without a reload: the check says so and takes
no answer.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from harness.chromium import open_path, wait_drawn
from harness.stage import clipped_texts
from tests.e2e.test_accessibility import in_both_themes
from workbench.classroom.store import RunEntry
from workbench.common.device_checks import DEVICE_MISMATCH as CHECK

pytestmark = pytest.mark.e2e


def _start(page, app_url):
    open_path(page, app_url, "/class")
    page.get_by_role("button", name="Start a class").click()
    code_element = page.locator(".class-code")
    expect(code_element).to_have_text(re.compile(r"^[A-Z0-9]{6}$"))
    code = code_element.inner_text().strip()
    page.wait_for_function("() => document.cookie.includes('workbench_class_teacher=')")
    key = page.evaluate("() => document.cookie.split('; ').find(c => "
                        "c.startsWith('workbench_class_teacher=')).split('.').slice(1).join('.')")
    return code, key


def test_a_teacher_downloads_the_report_ends_keeping_it_then_deletes_it_on_a_phone(
        browser, app_url, tmp_path, servers_store):
    context = browser.new_context(viewport={"width": 390, "height": 844}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        code, key = _start(page, app_url)
        store = servers_store
        member = store.join(code, "-Ada")
        store.post_run(code, member.token, RunEntry("/moons_trainer?hidden=8", "SGD", 0.1, 0.9,
                                                    0.955, 41))

        page.get_by_text("End the class", exact=True).click()        # the expander
        page.get_by_role("button", name="End the class…").click()
        warning = page.locator("[data-testid=stAlert]").filter(has_text=f"Ending class {code}")
        expect(warning).to_contain_text("1 member(s)")
        expect(warning).to_contain_text("1 posted run(s)")
        wait_drawn(page)
        confirm = page.get_by_role("button", name=f"Yes, end class {code} and keep its report")
        confirm.scroll_into_view_if_needed()
        assert clipped_texts(confirm) == []
        box = confirm.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 391, f"cut on the phone: {box}"
        in_both_themes(page, "ending a class, asked first, on a phone")

        end_panel = page.locator(".st-key-class_end_downloads")
        with page.expect_download() as downloading:
            end_panel.get_by_role("button", name="Download the report (CSV)").click()
        saved = Path(tmp_path) / "class.csv"
        downloading.value.save_as(saved)
        text = saved.read_text()
        assert text.startswith(f"Class {code},"), text[:200]
        assert "\n'-Ada," in text and "/moons_trainer?hidden=8" in text, text
        with page.expect_download() as downloading:
            end_panel.get_by_role("button", name="Download the report (HTML, to print)").click()
        saved = Path(tmp_path) / "class.html"
        downloading.value.save_as(saved)
        report = saved.read_text()
        assert f"<h1>Class {code}: report</h1>" in report and "-Ada" in report
        assert "<script" not in report
        assert store.check_teacher(code, key) == code                 # nothing ended yet

        confirm.click()
        expect(page.get_by_text(f"Class {code} ended; learners can no longer answer.")).to_be_visible()
        expect(page.get_by_text("Its report is kept until")).to_be_visible()
        assert not page.get_by_text("check the code with your teacher").count()
        page.reload()                                    # the browser keeps opening the report
        expect(page.get_by_text("Its report is kept until")).to_be_visible()
        in_both_themes(page, "an ended class's kept report on a phone")
        assert store.ended(code, key) is not None
        page.get_by_text("Delete the report now", exact=True).click()
        page.get_by_text(f"Yes, delete class {code}'s report and data now").click()
        page.get_by_role("button", name="Delete now").click()
        expect(page.get_by_text(f"Class {code}'s report and data are deleted.")).to_be_visible()
        expect(page.get_by_role("button", name="Start a class")).to_be_visible()
        with pytest.raises(Exception, match="no class"):
            store.ended(code, key)
    finally:
        context.close()


def test_a_learners_open_page_sees_the_check_closed_without_a_reload(browser, app_url, servers_store):
    teacher_context = browser.new_context(viewport={"width": 1280, "height": 720})
    learner_context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
    try:
        teacher = teacher_context.new_page()
        teacher.set_default_timeout(60_000)
        code, key = _start(teacher, app_url)
        learner = learner_context.new_page()
        learner.set_default_timeout(60_000)
        open_path(learner, app_url, f"/?class={code}")
        check = learner.locator(f".st-key-kc_{CHECK.key}")
        commit = check.get_by_role("button", name="Commit and reveal")
        expect(commit).to_be_visible()
        servers_store.pace_check(code, key, CHECK.key, closed=True)
        expect(check.get_by_text("Your teacher closed this question")).to_be_visible()
        expect(commit).to_have_count(0)
        servers_store.pace_check(code, key, CHECK.key, closed=False, timer_seconds=90)
        expect(check.get_by_role("timer")).to_contain_text(re.compile(r"answers close in 1:[23]\d"))
        check.get_by_text(CHECK.answer().correct_option, exact=True).click()
        check.get_by_role("button", name="Commit and reveal").click()
        expect(check.get_by_text("computed it with this function")).to_be_visible()
        assert servers_store.tallies(code, key)[0].answered == 1
    finally:
        teacher_context.close()
        learner_context.close()
