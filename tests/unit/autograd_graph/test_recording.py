"""recording.py: each computed tensor is recorded with its line, its inputs and PyTorch's grad
mode, the catalog finds the record behind a grad_fn until an in-place change replaces it, and a
tensor outside the graph keeps the reason PyTorch left it out."""
from __future__ import annotations

import torch

from workbench.autograd_graph.problems import Position
from workbench.autograd_graph.recording import Catalog, Note, Recorder


def test_a_record_carries_the_line_its_inputs_and_the_grad_mode():
    position = Position(5)
    recorder = Recorder(position)
    w = torch.ones(2, requires_grad=True)
    x = torch.tensor([2.0, 3.0])
    y = w * x
    recorder.record("w * x", y, (w, [x, w], 2.0))
    (record,) = recorder.catalog.ops
    assert (record.line, record.label, record.result) == (5, "w * x", y)
    assert [id(t) for t in record.inputs] == [id(w), id(x), id(w)]
    assert record.grad_enabled == torch.is_grad_enabled()
    assert recorder.catalog.producer(y.grad_fn) is record
    assert recorder.catalog.reason_of(y) is None


def test_the_producer_is_forgotten_once_an_in_place_op_replaces_the_grad_fn():
    recorder = Recorder(Position())
    w = torch.ones(2, requires_grad=True)
    y = w * 2
    recorder.record("w * 2", y, (w,))
    before = y.grad_fn
    y.mul_(3)
    assert y.grad_fn is not before
    assert recorder.catalog.producer(y.grad_fn) is None


def test_tensors_outside_the_graph_keep_the_reason():
    recorder = Recorder(Position())
    w = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        quiet = w * 2
        recorder.record("w * 2", quiet, (w,))
    with torch.inference_mode():
        inference = torch.ones(2) * 2
        recorder.record("ones * 2", inference, ())
    cut = w.detach()
    recorder.detached(cut)
    assert not quiet.requires_grad and inference.is_inference()
    assert recorder.catalog.reason_of(quiet) == "made inside torch.no_grad(): not recorded"
    assert recorder.catalog.reason_of(inference) == ("made inside torch.inference_mode(): an "
                                                     "inference tensor, never recorded")
    assert recorder.catalog.reason_of(cut) == "made by detach(): cut from the graph"
    assert [op.grad_enabled for op in recorder.catalog.ops] == [False, False]


def test_names_are_kept_in_the_order_last_assigned():
    catalog = Catalog()
    a, b = torch.ones(1), torch.zeros(1)
    catalog.name(a, "a")
    catalog.name(b, "b")
    catalog.name(a, "a")
    assert catalog.order == ["b", "a"]
    assert catalog.name_of(a) == "a" and catalog.name_of(torch.ones(1)) is None


def test_a_note_is_placed_at_the_current_line():
    position = Position(2)
    recorder = Recorder(position)
    position.line = 9
    recorder.note("title", "text")
    assert recorder.notes == [Note(9, "title", "text")]
