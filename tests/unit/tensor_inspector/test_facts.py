"""Every fact the inspector reports equals what PyTorch reports on a real tensor.

Op chains are generated as (method, args) pairs; the reference applies them with plain Python
calls on a real tensor, never through the inspector's parser.
"""
from __future__ import annotations

import dataclasses
import math

import pytest
import torch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import workbench.tensor_inspector.report as tensors
from workbench.tensor_inspector.layout import layout_picture
from workbench.tensor_inspector.presets import PRESETS
from workbench.tensor_inspector.factory import build_tensor
from workbench.tensor_inspector.report import MAX_VALUES, inspect
from workbench.tensor_inspector.settings import DTYPES, FILLS, TensorSettings, parse_shape

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])

shapes = st.lists(st.integers(1, 4), min_size=0, max_size=4).map(tuple)
dims = st.integers(-4, 4)
sizes = st.lists(st.integers(-1, 6), min_size=1, max_size=3).map(tuple)


def _slice_text(item: slice | int | None) -> str:
    if item is None:
        return "None"
    if isinstance(item, int):
        return str(item)
    parts = ["" if v is None else str(v) for v in (item.start, item.stop, item.step)]
    return ":".join(parts[:2]) + (f":{parts[2]}" if item.step is not None else "")


slices = st.one_of(
    st.builds(slice, st.none() | st.integers(-3, 3), st.none() | st.integers(-3, 4),
              st.none() | st.sampled_from([1, 2, -1])),
    st.integers(-3, 3), st.none())


@st.composite
def ops(draw) -> tuple[str, object]:
    """One op as (text, reference) where reference(t) applies it with a plain Python call."""
    kind = draw(st.sampled_from(["view", "reshape", "transpose", "t", "permute", "unsqueeze",
                                 "squeeze", "flatten", "contiguous", "expand", "narrow", "index"]))
    if kind in ("view", "reshape", "expand"):
        args = draw(sizes)
        return f"{kind}({', '.join(map(str, args))})", lambda t: getattr(t, kind)(*args)
    if kind == "transpose":
        a, b = draw(dims), draw(dims)
        return f"transpose({a}, {b})", lambda t: t.transpose(a, b)
    if kind == "permute":
        order = draw(st.permutations(range(draw(st.integers(0, 4)))))
        return f"permute({', '.join(map(str, order))})", lambda t: t.permute(*order)
    if kind == "unsqueeze":
        d = draw(dims)
        return f"unsqueeze({d})", lambda t: t.unsqueeze(d)
    if kind == "squeeze":
        d = draw(st.none() | dims)
        return (("squeeze()", lambda t: t.squeeze()) if d is None
                else (f"squeeze({d})", lambda t: t.squeeze(d)))
    if kind == "flatten":
        a, b = draw(dims), draw(dims)
        return f"flatten({a}, {b})", lambda t: t.flatten(a, b)
    if kind == "narrow":
        d, start, length = draw(dims), draw(st.integers(0, 3)), draw(st.integers(0, 3))
        return f"narrow({d}, {start}, {length})", lambda t: t.narrow(d, start, length)
    if kind == "index":
        items = tuple(draw(st.lists(slices, min_size=1, max_size=3)))
        return "[" + ", ".join(_slice_text(i) for i in items) + "]", lambda t: t[items]
    return f"{kind}()", lambda t: getattr(t, kind)()


def _chain_text(texts: list[str]) -> str:
    return "".join(("" if t.startswith("[") else ".") + t for t in texts).removeprefix(".")


def _memory(result: torch.Tensor, source: torch.Tensor) -> str | None:
    """PyTorch's own answer: the same data pointer means shared storage (None: no memory)."""
    if result is source:
        return "same tensor"
    if result.untyped_storage().data_ptr() == 0 or source.untyped_storage().data_ptr() == 0:
        return None
    same = result.untyped_storage().data_ptr() == source.untyped_storage().data_ptr()
    return "view" if same else "new memory"


def _reference(shape, dtype, chain) -> tuple[list[torch.Tensor], BaseException | None, int]:
    t = torch.zeros(shape, dtype=DTYPES[dtype])
    tensors_seen = [t]
    for number, (_, apply) in enumerate(chain, start=1):
        try:
            t = apply(t)
        except (RuntimeError, IndexError, ValueError, TypeError) as exc:
            return tensors_seen, exc, number
        tensors_seen.append(t)
    return tensors_seen, None, 0


def _assert_facts_match(facts, real: torch.Tensor) -> None:
    assert facts.shape == tuple(real.shape)
    assert facts.stride == real.stride()
    assert facts.storage_offset == real.storage_offset()
    assert facts.is_contiguous == real.is_contiguous()
    assert facts.numel == real.numel()
    assert facts.nbytes == real.nbytes
    assert facts.itemsize == real.element_size()
    assert facts.dtype == str(real.dtype)
    assert facts.storage_bytes == real.untyped_storage().nbytes()
    assert facts.storage_elements == real.untyped_storage().nbytes() // real.element_size()


@SETTINGS
@given(shapes, st.sampled_from(list(DTYPES)), st.lists(ops(), max_size=4))
def test_facts_equal_pytorch_on_a_real_tensor(shape, dtype, chain):
    report = inspect(TensorSettings(shape=shape, dtype=dtype, ops=_chain_text([c[0] for c in chain])))
    assert report.chain_failure is None or report.chain_failure.step_number is not None
    expected, error, failed_at = _reference(shape, dtype, chain)
    assert report.materialized
    assert len(report.views) == len(expected)
    for number, (view, real) in enumerate(zip(report.views, expected, strict=True)):
        _assert_facts_match(view.facts, real)
        if number:
            relation = _memory(real, expected[number - 1])
            if relation is not None:
                assert view.facts.memory == relation
    if error is None:
        assert report.chain_failure is None
    else:
        assert report.chain_failure is not None
        assert report.chain_failure.step_number == failed_at
        assert report.chain_failure.error.message == str(error).strip()


@SETTINGS
@given(shapes, st.sampled_from(list(DTYPES)), st.lists(ops(), max_size=4))
def test_meta_facts_equal_real_facts(shape, dtype, chain):
    """Above the value cap the page reports from `meta`: the same facts, the same failing step."""
    text = _chain_text([c[0] for c in chain])
    real = inspect(TensorSettings(shape=shape, dtype=dtype, ops=text))
    original = tensors.MAX_VALUES
    tensors.MAX_VALUES = -1
    try:
        meta = inspect(TensorSettings(shape=shape, dtype=dtype, ops=text))
    finally:
        tensors.MAX_VALUES = original
    assert not meta.materialized and real.materialized
    # The same facts, apart from where they were computed: `device` says meta for the one
    # and the real tensor's device for the other.
    assert [dataclasses.replace(v.facts, device="") for v in meta.views] == \
        [dataclasses.replace(v.facts, device="") for v in real.views]
    assert {v.facts.device for v in meta.views} == {"meta"}
    assert {v.facts.device for v in real.views} == {str(real.views[0].tensor.device)}
    assert (meta.chain_failure is None) == (real.chain_failure is None)
    if real.chain_failure is not None:
        assert meta.chain_failure.step_number == real.chain_failure.step_number


@SETTINGS
@given(shapes, st.lists(ops(), max_size=3))
@example((), [("expand(0, -1)", None)])     # torch 2.13 gives shape (0, -1): a negative size
def test_both_pictures_give_each_element_one_colour(shape, chain):
    """Grid cell and storage cell of the same element agree; positions follow the strides."""
    report = inspect(TensorSettings(shape=shape, ops=_chain_text([c[0] for c in chain])))
    view = report.result
    picture = layout_picture(view, colour_max=report.views[0].facts.numel - 1, max_strip=10**6)
    offset, stride = view.facts.storage_offset, view.facts.stride
    for panel in picture.panels:
        for r in range(panel.rows):
            for c in range(panel.cols):
                position = panel.positions[r][c]
                index = () if picture.rank == 0 else (c,) if picture.rank == 1 else \
                    (*panel.lead, r, c)
                assert position == offset + sum(i * s for i, s in zip(index, stride, strict=True))
                assert picture.strip_colours[position] == panel.colours[r][c]
                # arange fill: the value of an element is its position in x's storage
                assert float(panel.values[r][c]) == panel.colours[r][c]
    assert picture.walk == torch.as_strided(
        torch.arange(view.facts.storage_elements), view.facts.shape, stride, offset
    ).reshape(-1)[:len(picture.walk)].tolist()


def test_transpose_then_view_fails_with_pytorchs_message_and_two_fixes():
    report = inspect(TensorSettings(shape=(4, 6), ops="t().view(-1)"))
    x = torch.arange(24.0).reshape(4, 6)
    with pytest.raises(RuntimeError) as caught:
        x.t().view(-1)
    failure = report.chain_failure
    assert failure.step_number == 2 and failure.error.message == str(caught.value)
    fixed = [dict(f.changes)["ops"] for f in failure.fixes]
    assert fixed == ["t().reshape(-1)", "t().contiguous().view(-1)"]
    for ops_text in fixed:
        after = inspect(TensorSettings(shape=(4, 6), ops=ops_text))
        assert after.chain_failure is None
        assert after.result.facts.memory == "new memory" or after.views[-2].facts.memory == "new memory"
        assert torch.equal(after.result.tensor, x.t().reshape(-1))


def test_reshape_note_says_whether_it_copied():
    copied = inspect(TensorSettings(shape=(4, 6), ops="t().reshape(-1)")).result
    viewed = inspect(TensorSettings(shape=(4, 6), ops="reshape(-1)")).result
    assert copied.facts.memory == "new memory" and "copy" in copied.note
    assert viewed.facts.memory == "view" and "view" in viewed.note


def test_squeeze_of_a_dimension_that_is_not_1_is_explained_not_raised():
    report = inspect(TensorSettings(shape=(4, 6), ops="squeeze(0)"))
    assert report.chain_failure is None
    assert report.result.facts.shape == tuple(torch.zeros(4, 6).squeeze(0).shape)
    assert "size 1" in report.result.note


def test_negative_step_is_explained_with_flip_as_the_fix():
    report = inspect(TensorSettings(shape=(4, 6), ops="[::-1]"))
    assert "negative strides" in report.chain_failure.error.title
    assert ("ops", "flip(0)") in report.chain_failure.fixes[0].changes


def test_huge_shapes_are_described_without_allocating():
    report = inspect(TensorSettings(shape=(10000, 10000, 10000), ops="permute(2, 0, 1).contiguous()"))
    assert not report.materialized
    assert all(v.tensor.is_meta for v in report.views)
    big = torch.empty(10000, 10000, 10000, device="meta")
    assert report.views[1].facts.stride == big.permute(2, 0, 1).stride()
    assert report.result.facts.nbytes == big.nbytes
    assert report.largest_numel > MAX_VALUES


def test_expanding_beyond_the_cap_stays_on_meta():
    report = inspect(TensorSettings(shape=(1,), ops="expand(100000, 100000).contiguous()"))
    assert not report.materialized
    assert report.result.facts.numel == 10**10


@pytest.mark.parametrize("fill", FILLS)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "bfloat16"])
def test_every_fill_builds_or_is_explained(fill, dtype):
    settings_ = TensorSettings(shape=(2, 3), dtype=dtype, fill=fill, value=1.0)
    report = inspect(settings_)
    if report.build_failure is None:
        x = report.views[0].tensor
        assert x.shape == (2, 3) and x.dtype == DTYPES[dtype]
    else:
        assert report.build_failure.error.message
        assert report.build_failure.fixes


def test_random_fills_come_from_the_learners_seed():
    a = build_tensor(TensorSettings(shape=(3, 3), fill="randn", seed=7))
    b = build_tensor(TensorSettings(shape=(3, 3), fill="randn", seed=7))
    expected = torch.randn((3, 3), generator=torch.Generator().manual_seed(7))
    assert torch.equal(a, b) and torch.equal(a, expected)


def test_every_preset_runs_as_its_story_says():
    for name, preset in PRESETS.items():
        report = inspect(dataclasses.replace(TensorSettings(), shape=preset.shape, ops=preset.ops,
                                             dtype=preset.dtype))
        failing = "error" in name or "negative" in name.lower()
        assert (report.chain_failure is not None) == failing, name
        assert report.materialized == (math.prod(preset.shape) <= MAX_VALUES), name


@pytest.mark.parametrize("text, shape", [("2, 3, 4", (2, 3, 4)), ("", ()), ("(5,)", (5,)),
                                         ("[4,6]", (4, 6)), (" 0 , 3 ", (0, 3))])
def test_parse_shape(text, shape):
    assert parse_shape(text) == shape


@pytest.mark.parametrize("text", ["a", "1,2,3,4,5,6", "-1", "2.5", "10000000000"])
def test_parse_shape_refuses(text):
    with pytest.raises(ValueError):
        parse_shape(text)


def test_a_size_mismatch_offers_minus_one_where_pytorch_accepts_it():
    report = inspect(TensorSettings(shape=(4, 6), ops="view(5, 4)"))
    x = torch.arange(24.0).reshape(4, 6)
    with pytest.raises(RuntimeError) as caught:
        x.view(5, 4)
    assert report.chain_failure.error.message == str(caught.value)
    offered = [dict(f.changes)["ops"] for f in report.chain_failure.fixes]
    assert offered[0] == "view(-1, 4)" and offered[-1] == ""
    assert tuple(x.view(-1, 4).shape) == inspect(TensorSettings(ops=offered[0])).result.facts.shape


def test_a_long_chain_of_copies_stays_within_the_total_cap():
    chain = ".".join(["clone()"] * 12)
    small = inspect(TensorSettings(shape=(100, 100), ops=chain))
    large = inspect(TensorSettings(shape=(300, 300), ops=chain))
    assert small.materialized and not large.materialized
    assert large.total_numel == 13 * 300 * 300 > tensors.MAX_TOTAL_VALUES


def test_nbytes_of_counts_numel_times_itemsize_and_says_when_pytorch_cannot():
    from workbench.tensor_inspector.dtypes import nbytes_of
    assert nbytes_of((2, 3), "float32") == 24
    assert nbytes_of((4,), "float16") == 8 and nbytes_of((), "int64") == 8
    assert nbytes_of((2 ** 62, 2 ** 62), "float32") is None
