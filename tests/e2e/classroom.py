"""What the class e2e tests do the same way: a teacher starts a class on the Class page."""
from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from harness.chromium import open_path
from workbench.classroom.codes import CODE_ALPHABET, CODE_LENGTH

CODE = re.compile(f"^[{CODE_ALPHABET}]{{{CODE_LENGTH}}}$")


def start_class(page: Page, app_url: str, path: str = "/class") -> str:
    """Open `path` (the Class page, in presenter mode or not), press *Start a class*, and wait
    for the class's code on the board; the code."""
    open_path(page, app_url, path)
    page.get_by_role("button", name="Start a class").click()
    code = page.locator(".class-code")
    expect(code).to_have_text(CODE)
    return code.inner_text().strip()
