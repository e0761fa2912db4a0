"""budget.py: each count refuses the step past its limit, at the line the run is at, and the walks
of a learner's lists count what a full walk would meet (checked against one) in bounded steps."""
from __future__ import annotations

import pytest
import torch

from workbench.autograd_graph.budget import Budget, distinct_leaves, flat_tensors, measure
from workbench.autograd_graph.language import Limits, ProgramRefused
from workbench.autograd_graph.problems import Position


def started(limits: Limits, line: int = 1) -> Budget:
    budget = Budget(limits, Position(line))
    budget.start()
    return budget


def full_walk(value) -> tuple[int, int]:
    """(items, lists) by visiting every appearance: the answer `measure` must give."""
    if not isinstance(value, list | tuple):
        return 1, 0
    items = lists = 0
    for item in value:
        inner_items, inner_lists = full_walk(item)
        items += inner_items
        lists += inner_lists + isinstance(item, list | tuple)
    return items, lists


def test_a_refusal_is_a_limit_placed_at_the_current_line():
    position = Position(3)
    budget = Budget(Limits(), position)
    position.line = 7
    refusal = budget.limit("too much")
    assert isinstance(refusal, ProgramRefused)
    assert (refusal.line, refusal.col, refusal.kind, refusal.message) == (7, None, "limit", "too much")


def test_the_deadline_is_checked_at_every_tick():
    budget = started(Limits(max_seconds=0.0))
    with pytest.raises(ProgramRefused, match="the program ran longer than 0 s"):
        budget.tick()
    started(Limits(max_seconds=60.0)).tick()  # well within its minute: no refusal


def test_steps_count_until_the_cap():
    budget = started(Limits(max_statements_run=3))
    for _ in range(3):
        budget.count_step()
    assert budget.statements_run == 3
    with pytest.raises(ProgramRefused) as refused:
        budget.count_step()
    assert str(refused.value) == ("line 1: the program ran more than 3 statements (each `while` "
                                  "test counts as one)")


def test_loops_and_backward_calls_have_their_own_caps():
    budget = started(Limits(max_loop_iterations=5, max_backward_calls=2))
    budget.check_loop_length(5)
    with pytest.raises(ProgramRefused, match=r"a loop may run at most 5 times \(this one: 6\)"):
        budget.check_loop_length(6)
    budget.count_backward()
    budget.count_backward()
    with pytest.raises(ProgramRefused, match="at most 2 backward\\(\\) calls"):
        budget.count_backward()
    assert budget.backward_calls == 3


def test_tensors_are_accounted_by_their_numel():
    budget = started(Limits(max_numel=12, max_total_numel=30))
    first, second = torch.ones(3, 4), torch.zeros(2, 5)
    budget.account(first)
    budget.account(second)
    assert budget.total_numel == first.numel() + second.numel()
    big = torch.ones(13)
    with pytest.raises(ProgramRefused) as refused:
        budget.account(big)
    assert refused.value.message == f"a tensor of {big.numel():,} elements is larger than the 12 allowed"
    with pytest.raises(ProgramRefused, match="created more than 30 tensor elements in all"):
        budget.account(torch.ones(2, 5))


def test_a_list_literal_is_bounded_by_numbers_and_by_lists():
    budget = started(Limits(max_numel=8))
    budget.bound_list([1, 2, 3, [4, 5]])
    with pytest.raises(ProgramRefused, match="a list may hold at most 8 numbers"):
        budget.bound_list([[1, 2, 3]] * 3)
    empty = []
    with pytest.raises(ProgramRefused, match="at most 8 lists inside it"):
        budget.bound_list([[empty, empty, empty]] * 3)


@pytest.mark.parametrize("value", [
    [], [1, 2, 3], [[1, 2], [3, [4, []]]], ([1], (2, 3)), 5,
])
def test_measure_counts_what_a_full_walk_meets(value):
    assert measure(value, 10**6, lambda: None) == full_walk(value)


def test_measure_counts_a_shared_list_at_each_appearance_and_walks_it_once():
    inner = [1, 2, 3]
    outer = [inner, inner, [inner, inner]]
    steps = []
    assert measure(outer, 10**6, lambda: steps.append(1)) == full_walk(outer)
    fresh = [[1, 2, 3], [1, 2, 3], [[1, 2, 3], [1, 2, 3]]]
    fresh_steps = []
    measure(fresh, 10**6, lambda: fresh_steps.append(1))
    assert len(steps) < len(fresh_steps)


def test_distinct_leaves_gives_each_object_once_in_order():
    a, b = torch.ones(1), torch.zeros(1)
    shared = [a, b]
    leaves = distinct_leaves([shared, shared, (a, 3)], lambda: None)
    assert len(leaves) == 3 and leaves[0] is a and leaves[1] is b and leaves[2] == 3


def test_flat_tensors_gives_every_appearance_in_order():
    a, b = torch.ones(1), torch.zeros(2)
    found = flat_tensors([a, [b, a], (torch.Size([2]), 1.0), b])
    assert [id(t) for t in found] == [id(a), id(b), id(a), id(b)]
