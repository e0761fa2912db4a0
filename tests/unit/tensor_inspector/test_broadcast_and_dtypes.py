"""Broadcasting and matmul shapes, the dtype table and the NumPy bridge, each checked against
what PyTorch (and NumPy) say directly."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.tensor_inspector.broadcast import MISMATCH, PRESETS, combine_shapes
from workbench.tensor_inspector.dtypes import dtype_info, dtype_table
from workbench.tensor_inspector.numpy_bridge import bridge
from workbench.tensor_inspector.settings import DTYPES

small_shapes = st.lists(st.sampled_from([1, 2, 3, 4]), min_size=0, max_size=4).map(tuple)


def _torch_says(left, right, combine):
    a, b = torch.zeros(left), torch.zeros(right)
    try:
        return tuple((a @ b if combine == "matmul" else a + b).shape), None
    except RuntimeError as exc:
        return None, str(exc)


@settings(max_examples=60, deadline=None)
@given(small_shapes, small_shapes, st.sampled_from(["broadcast", "matmul"]))
def test_result_or_error_is_pytorchs(left, right, combine):
    combo = combine_shapes(left, right, combine)
    result, error = _torch_says(left, right, combine)
    assert combo.result == result
    assert combo.error == (error.strip() if error else None)


@settings(max_examples=60, deadline=None)
@given(small_shapes, small_shapes)
def test_broadcast_columns_line_up_from_the_right(left, right):
    combo = combine_shapes(left, right, "broadcast")
    assert len(combo.columns) == max(len(left), len(right))
    assert [c.left for c in combo.columns if c.left is not None] == list(left)
    assert [c.right for c in combo.columns if c.right is not None] == list(right)
    has_mismatch = any(c.rule == MISMATCH for c in combo.columns)
    assert has_mismatch == (combo.result is None)
    if combo.result is not None:
        assert tuple(c.result for c in combo.columns) == torch.broadcast_shapes(left, right)


@pytest.mark.parametrize("name", list(PRESETS))
def test_presets(name):
    left, right, combine = PRESETS[name]
    combo = combine_shapes(left, right, combine)
    assert combo.result == _torch_says(left, right, combine)[0]
    assert (combo.result is None) == ("differ" in name or "does not" in name)


def test_large_shapes_use_meta_and_never_allocate():
    combo = combine_shapes((4096, 4096, 4096), (4096, 4096), "matmul")
    expected = (torch.empty(4096, 4096, 4096, device="meta") @ torch.empty(4096, 4096, device="meta"))
    assert combo.result == tuple(expected.shape)


def test_attention_scores_shape():
    combo = combine_shapes((2, 4, 8, 16), (2, 4, 16, 8), "matmul")
    assert combo.result == tuple((torch.zeros(2, 4, 8, 16) @ torch.zeros(2, 4, 16, 8)).shape)
    assert [c.result for c in combo.columns if not c.matrix] == [2, 4]


@pytest.mark.parametrize("name", list(DTYPES))
def test_dtype_facts_come_from_pytorch(name):
    dtype = DTYPES[name]
    info = dtype_info(name)
    itemsize = torch.empty((), dtype=dtype).element_size()
    assert info.itemsize == itemsize and info.bits == itemsize * 8
    if dtype.is_floating_point:
        finfo = torch.finfo(dtype)
        assert info.sign_bits + info.exponent_bits + info.mantissa_bits == finfo.bits
        assert 2.0 ** -info.mantissa_bits == finfo.eps
        assert info.largest == f"{finfo.max:.4g}" and info.smallest == f"{finfo.min:.4g}"
        assert float(info.one_tenth) == torch.tensor(0.1, dtype=torch.float64).to(dtype).item()
    elif not dtype.is_complex and dtype != torch.bool:
        iinfo = torch.iinfo(dtype)
        assert int(info.smallest.replace(",", "")) == iinfo.min
        assert int(info.largest.replace(",", "")) == iinfo.max


def test_bfloat16_has_float32s_range_and_float16_does_not():
    table = {d.name: d for d in dtype_table()}
    assert table["bfloat16"].exponent_bits == table["float32"].exponent_bits
    assert table["float16"].exponent_bits < table["float32"].exponent_bits


def test_64_by_128_bfloat16_takes_16_kib():
    nbytes = torch.empty(64, 128, dtype=torch.bfloat16, device="meta").nbytes
    assert nbytes == math.prod((64, 128)) * dtype_info("bfloat16").itemsize


@pytest.mark.parametrize("name", list(DTYPES))
def test_numpy_bridge_shares_and_copies_as_pytorch_says(name):
    report = bridge(name, 42)
    ways = {row.way.split("  ")[0]: row for row in report.rows}
    assert ways["torch.from_numpy(arr)"].shares_memory
    assert not ways["torch.tensor(arr)"].shares_memory
    assert ways["torch.from_numpy(arr)"].after_write.startswith("[42.0")
    assert ways["torch.tensor(arr)"].after_write.startswith("[0.0")
    t = torch.arange(6).reshape(2, 3).to(DTYPES[name]).t()
    try:
        back = t.numpy()
    except TypeError as exc:
        assert report.numpy_error == str(exc)
    else:
        assert report.numpy_strides == back.strides
        assert report.torch_strides == t.stride()
        assert np.shares_memory(back, t.numpy())


def test_broadcasting_is_expand_with_stride_zero():
    combo = combine_shapes((3, 1), (1, 4), "broadcast")
    a, b = torch.zeros(3, 1), torch.zeros(1, 4)
    assert combo.expanded_strides == (a.expand(3, 4).stride(), b.expand(3, 4).stride())
    assert combine_shapes((3, 4), (4, 3), "broadcast").expanded_strides is None
