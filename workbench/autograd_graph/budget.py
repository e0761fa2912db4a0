"""What a run may spend, and the walks of a learner's lists that stay within it.

`Budget` holds the counting limits of one run (CPU time, statements, tensor elements, backward
calls, list sizes) and refuses the step that goes past one. `measure` and `distinct_leaves` walk a
list the program built, however often it shares its parts, in steps bounded by the limit, with the
deadline checked at every step.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch

from workbench.autograd_graph.language import Limits, ProgramRefused
from workbench.autograd_graph.problems import Position
from workbench.common.jobs import breathe


class Budget:
    """The counts of one run against the page's limits; each count refuses the step past its limit."""

    def __init__(self, limits: Limits, position: Position) -> None:
        self.limits = limits
        self.position = position
        self.deadline = 0.0
        self.statements_run = 0
        self.total_numel = 0
        self.backward_calls = 0

    def start(self) -> None:
        """Start the clock: from now the run may spend `max_seconds` of this thread's CPU time."""
        # The limit is on the CPU time this thread spends on the program: what it costs the
        # server, the same on a quiet machine and a loaded one (wall-clock time would refuse a
        # 0.15 s program on a server busy enough to run it ten times slower).
        self.deadline = time.thread_time() + self.limits.max_seconds

    def limit(self, message: str) -> ProgramRefused:
        """A refusal for going past one of the page's limits (not for the language)."""
        return ProgramRefused(self.position.line, message, kind="limit")

    def tick(self) -> None:
        # Where the page shares the CPU (jobs.SCHEDULER.sharing), a long program lets the
        # learners training have their turns (waiting costs no CPU time: the limit is unmoved).
        breathe()
        if time.thread_time() > self.deadline:
            raise self.limit(f"the program ran longer than {self.limits.max_seconds:g} s")

    def count_step(self) -> None:
        """A statement run, or a `while` condition tested: both count against the step cap."""
        self.statements_run += 1
        if self.statements_run > self.limits.max_statements_run:
            raise self.limit(f"the program ran more than {self.limits.max_statements_run} "
                             "statements (each `while` test counts as one)")
        self.tick()

    def check_loop_length(self, rounds: int) -> None:
        """A `for` loop's range, before its first round."""
        if rounds > self.limits.max_loop_iterations:
            raise self.limit(f"a loop may run at most {self.limits.max_loop_iterations} "
                             f"times (this one: {rounds})")

    def count_backward(self) -> None:
        self.backward_calls += 1
        if self.backward_calls > self.limits.max_backward_calls:
            raise self.limit(f"at most {self.limits.max_backward_calls} backward() calls")

    def bound_list(self, items: list[Any]) -> None:
        """A list literal holds at most `max_numel` items and `max_numel` lists inside it.

        Every list of a program is made by a literal (no method returns one), so this bounds every
        later walk of a learner's list: torch.tensor's, print's, an operand check's.
        """
        limit = self.limits.max_numel
        count, lists = measure(items, limit, self.tick)
        if count > limit:
            raise self.limit(f"a list may hold at most {limit} numbers")
        if lists > limit:
            raise self.limit(f"a list may hold at most {limit} lists inside it, each counted as "
                             "often as it appears (`b = [a, a]` holds `a` twice)")

    def account(self, tensor: torch.Tensor) -> None:
        """A tensor the program made (or changed in place): its size, and the run's total."""
        if tensor.numel() > self.limits.max_numel:
            raise self.limit(f"a tensor of {tensor.numel():,} elements is larger than "
                             f"the {self.limits.max_numel:,} allowed")
        self.account_elements(tensor.numel())

    def account_elements(self, count: int) -> None:
        self.total_numel += count
        if self.total_numel > self.limits.max_total_numel:
            raise self.limit(f"the program created more than "
                             f"{self.limits.max_total_numel:,} tensor elements in all")


def is_list(value: Any) -> bool:
    """A list or tuple of the program's (a torch.Size too: a tuple of numbers)."""
    return isinstance(value, list | tuple)


def measure(value: Any, limit: int, tick: Callable[[], None]) -> tuple[int, int]:
    """(items, lists) in `value`: the numbers (and tensors, strings...) and the lists inside it,
    each counted as often as it appears, as `torch.tensor`, `print` and every walk of it meet them.

    A program can share one list many times (`b = [a, a]`, `c = [b, b]`, ...): 30 lines hold 2**30
    items, so counting them one by one (or letting torch.tensor walk them, in C and past any
    deadline) never ends. Here each distinct list is walked once (its counts are kept by id and
    added for every later appearance), the walk stops as soon as either count passes `limit`, and
    `tick` (the deadline check) runs at every step. Every step adds at least one to a count, so a
    walk takes at most 2 * limit + 2 steps, whatever the shape. Empty lists count too: a
    million-fold nesting of `[]` holds no number, yet torch.tensor walks every one of them.
    """
    if not is_list(value):
        return 1, 0
    known: dict[int, tuple[int, int]] = {}     # id(list) -> its counts; all alive during the walk
    # One frame per list on the path from `value` down: [the list, next index, items, lists].
    # Every count already added to a frame ends up in `value`'s, so the totals over the frames are
    # a lower bound on the answer: the walk may stop as soon as they pass the limit.
    frames: list[list[Any]] = [[value, 0, 0, 0]]
    items_total = lists_total = 0
    while True:
        tick()
        frame = frames[-1]
        node, index = frame[0], frame[1]
        if index == len(node):
            frames.pop()
            known[id(node)] = (frame[2], frame[3])
            if not frames:
                return frame[2], frame[3]
            frames[-1][2] += frame[2]
            frames[-1][3] += frame[3]
            continue
        frame[1] = index + 1
        item = node[index]
        if not is_list(item):
            frame[2] += 1
            items_total += 1
        elif id(item) in known:
            items, lists = known[id(item)]
            frame[2] += items
            frame[3] += lists + 1
            items_total += items
            lists_total += lists + 1
        else:
            frame[3] += 1
            lists_total += 1
            frames.append([item, 0, 0, 0])
        if items_total > limit or lists_total > limit:
            return items_total, lists_total


def distinct_leaves(value: Any, tick: Callable[[], None]) -> list[Any]:
    """Every value in `value` that is not a list, each object once (a shared list is walked once)."""
    seen: set[int] = set()
    leaves: list[Any] = []
    stack = [value]
    while stack:
        tick()
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if is_list(item) and not isinstance(item, torch.Size):
            stack.extend(reversed(item))
        else:
            leaves.append(item)
    return leaves


def flat_tensors(values: Any) -> list[torch.Tensor]:
    """The tensors in `values`, in order, each as often as it appears (`torch.stack([a, a])` makes
    two slices of `a`). Callers bound `values` first (`measure`): this walks every appearance."""
    found: list[torch.Tensor] = []
    stack = [values]
    while stack:
        item = stack.pop()
        if isinstance(item, torch.Tensor):
            found.append(item)
        elif is_list(item) and not isinstance(item, torch.Size):
            stack.extend(reversed(item))
    return found
