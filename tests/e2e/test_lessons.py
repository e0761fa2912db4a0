"""In a real browser: a lesson's last step sums it up, and its next-lesson link opens step 1 of
the next lesson inside the app (the same page, new URL parameters)."""
import re

import pytest
from playwright.sync_api import expect

from harness.chromium import open_path, wait_settled
from workbench.lessons.catalog import LESSONS, next_lesson

pytestmark = pytest.mark.e2e


def test_the_next_lesson_link_opens_the_next_lesson_at_step_1(page, app_url):
    lesson = LESSONS[0]
    after = next_lesson(lesson)
    open_path(page, app_url, f"/lessons?lesson={lesson.key}&step={len(lesson.steps)}")
    main = page.locator("[data-testid=stMain]")
    expect(main.get_by_text("What you saw", exact=True)).to_be_visible()
    main.get_by_role("link", name=f"Next lesson: {after.title}").click()
    wait_settled(page)
    expect(main.get_by_text(f"1. {after.steps[0].title}", exact=True)).to_be_visible()
    expect(main.get_by_text(f"Step 1 of {len(after.steps)}")).to_be_visible()
    expect(page).to_have_url(re.compile(rf"[?&]lesson={after.key}(&|$)"))
