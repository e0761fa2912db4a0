"""Opening pages through the real router in Streamlit's AppTest."""
from __future__ import annotations

import html
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from components.code_block import CODE_CLASS
from workbench.common.errors import UNEXPECTED_TITLE

APP = str(Path(__file__).resolve().parents[2] / "router.py")    # what streamlit_app.py serves


def open_page(script: str | None = None, query: dict[str, str] | None = None,
              timeout: float = 60) -> AppTest:
    """Run the router on `script` (e.g. 'app_pages/tensor_inspector/page.py') with URL parameters."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for name, value in (query or {}).items():
        at.query_params[name] = value
    if script is None:
        return at.run()
    at.run()
    at.switch_page(script)
    return at.run()


def code_blocks(at: AppTest | Block) -> list[str]:
    """The text of every code block on the page (or in one of its containers), as a learner
    reads it: components/code_block.py draws them as HTML (an `st.html` element), and `st.code`
    is still read where one is left."""
    texts = [element.value for element in at.code]
    for element in at.get("html"):
        body = str(element.value)
        if f'class="{CODE_CLASS}' in body:
            code = body.split("<code>", 1)[1].rsplit("</code>", 1)[0]
            texts.append(html.unescape(re.sub(r"<[^>]*>", "", code)))
    return texts


def shown_text(at: AppTest) -> str:
    """All markdown, captions, alerts and code on the page, as one string to search."""
    parts: list[str] = []
    for kind in ("markdown", "caption", "error", "warning", "info", "success", "title",
                 "header", "subheader", "text", "latex", "metric"):
        for element in at.get(kind):
            parts.append(str(getattr(element, "value", "") or getattr(element, "body", "")))
            label = getattr(element, "label", None)
            if label:
                parts.append(str(label))
    parts.extend(code_blocks(at))
    return "\n".join(parts)


GUARD_TITLE = UNEXPECTED_TITLE


def guard_panels(at: AppTest) -> list[str]:
    """The router guard's panels on the page, as `type: message` of the exception each caught.

    The guard turns an exception into an error panel, so `at.exception` stays empty even when a
    page broke: this is what a "the page is clean" check must look at.
    """
    if not any(GUARD_TITLE in e.value for e in at.error):
        return []
    return [c for c in code_blocks(at) if ": " in c and "Error" in c.split(":", 1)[0]] \
        or ["(the guard's panel, without a message)"]


def assert_clean(at: AppTest, what: object = None) -> None:
    """No exception reached Streamlit and the router's guard caught none.

    Use this, never a bare `assert not at.exception`, for "the page is clean": the guard keeps
    `at.exception` empty when a page raises (tests/app/test_planted_failures.py shows this fails
    on a broken page). `what` (a page, a query) goes into the failure message.
    """
    assert not at.exception, (what, [e.value for e in at.exception])
    assert not guard_panels(at), (what, guard_panels(at))
    assert "Traceback" not in shown_text(at), what


def settle(at: AppTest, timeout: float = 60) -> AppTest:
    """Let the live training a click started finish (it runs in the scheduler, outside the
    script), then run the page again, as the live view's next frame would."""
    import time

    from workbench.common.jobs import SCHEDULER

    # The browser's frames renew a playing run's lease; AppTest has no browser, so renew it
    # here: on a busy machine an epoch can outlast the lease, and a lapsed run restarts on the
    # next page run instead of ending.
    deadline = time.monotonic() + timeout
    while not SCHEDULER.wait_until_idle(0.25):
        for owner in SCHEDULER.owners():
            SCHEDULER.keep_alive(owner)
        assert time.monotonic() < deadline, "a training job did not finish"
    return at.run()


def live_view(at: AppTest) -> tuple[dict, dict]:
    """The moons trainer's live view as the browser receives it: (header, arrays)."""
    from components.binary_payload import unpack

    views = [e for e in at.get("bidi_component")
             if e.proto.component_name == "workbench_moons_live"]
    assert len(views) == 1, f"{len(views)} live views on the page"
    return unpack(views[0].proto.bytes)
