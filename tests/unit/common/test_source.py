"""workbench/common/source.py: the app's `ast` trees are built one thread at a time (CPython
3.11's gh-106905 fails two at once with "AST constructor recursion depth mismatch", which a class
of 60 learners hit), and a source is read once."""
from __future__ import annotations

import ast
import threading
import time

from workbench.common import source
from workbench.moons_trainer.model import MLP


def test_parse_builds_one_tree_at_a_time(monkeypatch):
    inside, most = 0, 0
    counting = threading.Lock()
    real_parse = ast.parse

    def slow_parse(text, mode="exec"):
        nonlocal inside, most
        with counting:
            inside += 1
            most = max(most, inside)
        time.sleep(0.01)                # long enough for the other threads to arrive
        with counting:
            inside -= 1
        return real_parse(text, mode=mode)

    monkeypatch.setattr(source.ast, "parse", slow_parse)
    threads = [threading.Thread(target=lambda: [source.parse("x.t().view(-1)", mode="eval")
                                                for _ in range(5)]) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most == 1


def test_a_source_is_read_once_and_is_the_modules_text(monkeypatch):
    first = source.source_of(MLP)
    assert first.startswith("class MLP(") and "def forward" in first
    monkeypatch.setattr(source.inspect, "getsource", lambda obj: "read again")
    assert source.source_of(MLP) == first
