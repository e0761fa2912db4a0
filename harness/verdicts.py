"""The sentences a benchmark's figures turn into, computed from those figures (issue 26: a
sentence that judges numbers is computed from them, and a test drives it to each outcome). They
live here, not in the benchmark, so that tests/unit/test_performance_doc.py can drive them without
importing a benchmark.
"""
from __future__ import annotations


def threads_verdict(idle: float, busy: float) -> str:
    """The setting two ratios (2-thread time / 1-thread time of a training step, with the other
    core idle and busy) argue for, from the ratios (bench/threads.py)."""
    alone = (f"a second thread saves {1 - idle:.0%} of a step while the other core is idle" if idle < 1
             else f"a second thread makes a step {idle:.2f}x as long even with the other core idle")
    if busy > 1:
        return (f"one thread per step (the app's setting): {alone}, but costs {busy:.1f}x as soon "
                "as another learner keeps the other core busy, which on a class's server is always")
    return f"two threads would pay: {alone}, and still {1 - busy:.0%} with the other core busy"
