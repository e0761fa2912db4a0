"""Every page's largest message stays under half of server.maxMessageSize.

server.maxMessageSize (.streamlit/config.toml) is sized from what the app sends: it is also the
largest message uvicorn reads from any client's websocket, so it is kept small, and this test
keeps it honest as the pages grow. A message over the limit is not sent: Streamlit shows the
learner "Data of size ... exceeds the message size limit" in its place.

Each case opens a page through the real router at its heaviest settings, found by running every
page's settings table at its maxima and each of its choices (bench: `python -m
tests.app.test_message_sizes` prints the table), and records the serialized size of every
ForwardMsg the script enqueues, which is what Streamlit compares with the limit
(runtime_util.serialize_forward_msg).
"""
from __future__ import annotations

import contextlib
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from streamlit.runtime.forward_msg_queue import ForwardMsgQueue

from tests.app.apptest import assert_clean, open_page, settle

CONFIG = Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml"
TENSORS = "app_pages/tensor_inspector/page.py"
LESSONS_PAGE = "app_pages/lessons/page.py"
# In MB of 10^6 bytes, as Streamlit counts it; 200 is Streamlit's default.
LIMIT = tomllib.loads(CONFIG.read_text())["server"].get("maxMessageSize", 200) * 10**6


@dataclass
class Case:
    name: str
    page: str
    query: dict[str, str]
    then: Callable | None = None          # more of the page, e.g. a step and each tab


def _what(msg) -> str:
    kind = msg.WhichOneof("type")
    if kind == "delta":
        kind = msg.delta.WhichOneof("type")
        if kind == "new_element":
            kind = msg.delta.new_element.WhichOneof("type")
    return kind


@contextlib.contextmanager
def recording() -> Iterator[list[tuple[int, str]]]:
    """(bytes, kind) of every ForwardMsg enqueued meanwhile."""
    sizes: list[tuple[int, str]] = []
    original = ForwardMsgQueue.enqueue

    def enqueue(self, msg):
        sizes.append((msg.ByteSize(), _what(msg)))
        return original(self, msg)

    ForwardMsgQueue.enqueue = enqueue
    try:
        yield sizes
    finally:
        ForwardMsgQueue.enqueue = original


def _moons_everything(at) -> None:
    """The moons trainer with its test points and the Bayes boundary drawn, an epoch trained,
    and each lazy tab opened."""
    at.toggle(key="mt_show_test").set_value(True).run()
    at.toggle(key="mt_show_bayes").set_value(True).run()
    settle(at.button(key="mt_step").click().run())
    for tab in ("Model", "Losses & hooks", "Weights & gradients", "Code", "Pitfall lab",
                "Check yourself"):
        at.session_state["mt_tabs"] = tab
        at.run()


def _all_lessons(_) -> None:
    """Every step of every lesson, each opened by its link."""
    from workbench.lessons.catalog import LESSONS

    for lesson in LESSONS:
        for number in range(1, len(lesson.steps) + 1):
            assert_clean(open_page(LESSONS_PAGE, {"lesson": lesson.key, "step": str(number)}))


CASES = [
    Case("home", "app_pages/home/page.py", {}),
    Case("home presenting", "app_pages/home/page.py", {"present": "1"}),
    Case("lessons, every step", LESSONS_PAGE, {}, then=_all_lessons),
    # The largest found: 12 slices of 16 x 16 cells of a tensor too big to make real, each
    # cell's hover naming the whole op chain (15 permutes, 285 of the 300 characters allowed).
    Case("tensor inspector, long chain, 5-D", TENSORS,
         {"shape": "100,100,100,100,100", "ops": ".permute(4,3,2,1,0)" * 15}),
    Case("tensor inspector, long chain, values", TENSORS,
         {"shape": "4,4,4,16,16", "ops": ".permute(-1,-2,-3,-4,-5)" * 12, "dtype": "complex64",
          "fill": "randn"}),
    Case("tensor inspector, long chain, presenting", TENSORS,
         {"shape": "100,100,100,100,100", "ops": ".permute(4,3,2,1,0)" * 15, "present": "1"}),
    Case("tensor inspector, copy of a 64^3", TENSORS,
         {"shape": "64,64,64", "ops": ".transpose(0,2).contiguous()", "dtype": "complex64",
          "fill": "randn"}),
    Case("autograd graph, 100-round loop", "app_pages/autograd_graph/page.py",
         {"code": "x = torch.ones(3, requires_grad=True)\ny = x\nfor i in range(100):\n"
                  "    y = (y * x).sin() + x.exp()\nL = y.sum()\n",
          "saved": "1", "backward": "10", "retain": "1"}),
    Case("moons trainer, widest and most points", "app_pages/moons_trainer/page.py",
         {"n": "5000", "hidden": "256,256,256,256", "dataset": "spiral", "batch": "2048",
          "epochs": "500"}, then=_moons_everything),
    Case("batch iterator, most samples", "app_pages/batch_iterator/page.py",
         {"n": "500", "batch": "500", "epochs": "5", "num_samples": "1000", "dataset": "moons",
          "workers": "2", "augment": "1", "pin_memory": "1"}),
]


def largest(case: Case) -> tuple[int, str]:
    with recording() as sizes:
        at = open_page(case.page, case.query)
        if case.then is not None:
            case.then(at)
    assert_clean(at, case.name)
    assert sizes, "no message was recorded"
    return max(sizes)


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.name, marks=[pytest.mark.spawns] if "workers" in c.query else [])
    for c in CASES])         # DataLoader workers are processes: that case is not for make check
def test_the_largest_message_of_each_page_is_under_half_the_limit(case):
    size, kind = largest(case)
    assert size < LIMIT / 2, (
        f"{case.name}: a {kind} message of {size:,} bytes, over half of server.maxMessageSize "
        f"({LIMIT:,} bytes). Shrink what the page sends, or raise the limit with a margin and "
        "say why in .streamlit/config.toml.")


if __name__ == "__main__":
    for case in CASES:
        size, kind = largest(case)
        print(f"{size:>10,} bytes  {kind:<16} {case.name}")
    print(f"limit {LIMIT:,} bytes; the test allows {LIMIT // 2:,}")
