"""Mixed precision (torch.autocast on the CPU) and .detach() before .numpy(), against PyTorch.

Expectations are computed here with plain PyTorch calls, never copied from the app's tables.
"""
from __future__ import annotations

import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

from workbench.common.errors import explain
from workbench.tensor_inspector.autocast import OPS, autocast_report, make_inputs
from workbench.tensor_inspector.numpy_bridge import detach_bridge


def _inside_autocast(run):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return run()


def _written_out(a, b, w, target) -> dict:
    """The table's ops, written out by hand, independent of OPS' lambdas."""
    return {"a @ b": lambda: a @ b, "F.linear(a, w)": lambda: F.linear(a, w),
            "torch.relu(a @ b)": lambda: torch.relu(a @ b),
            "a @ b + target": lambda: a @ b + target,
            "F.mse_loss(a @ b, target)": lambda: F.mse_loss(a @ b, target),
            "torch.exp(a)": lambda: torch.exp(a)}


@pytest.mark.parametrize("seed", [0, 7])
def test_each_ops_dtype_inside_and_outside_autocast_is_pytorchs(seed):
    report = autocast_report(seed)
    g = torch.Generator().manual_seed(seed)
    a, b = torch.randn(4, 8, generator=g), torch.randn(8, 3, generator=g)
    w, target = torch.randn(3, 8, generator=g), torch.randn(4, 3, generator=g)
    expected = _written_out(a, b, w, target)
    exact = _written_out(a.double(), b.double(), w.double(), target.double())
    assert [row.code for row in report.rows] == list(expected)
    for row in report.rows:
        inside = _inside_autocast(expected[row.code])
        outside = expected[row.code]()
        assert row.inside == str(inside.dtype) and row.outside == str(outside.dtype), row.code
        reference = exact[row.code]()
        assert row.max_error == pytest.approx((inside.double() - reference).abs().max().item())
        assert row.max_error_outside == pytest.approx(
            (outside.double() - reference).abs().max().item())


def test_the_why_column_matches_what_pytorch_did():
    rows = {row.code: row for row in autocast_report(0).rows}
    bf16, f32 = str(torch.bfloat16), str(torch.float32)
    assert rows["a @ b"].inside == bf16 and "bfloat16" in rows["a @ b"].why
    assert rows["torch.relu(a @ b)"].inside == bf16 and "follows" in rows["torch.relu(a @ b)"].why
    promoted = torch.promote_types(torch.bfloat16, torch.float32)
    assert rows["a @ b + target"].inside == str(promoted) and "promotion" in rows["a @ b + target"].why
    # mse_loss gets a bfloat16 input inside autocast, yet returns float32
    i = make_inputs(0)
    assert _inside_autocast(lambda: i.a @ i.b).dtype == torch.bfloat16
    assert rows["F.mse_loss(a @ b, target)"].inside == f32
    assert rows["torch.exp(a)"].inside == f32


def test_rounding_and_the_tensors_autocast_leaves_alone():
    report = autocast_report(3)
    i = make_inputs(3)
    r = report.rounding
    assert r.a00 == i.a[0, 0].item() and r.a00_bf16 == i.a[0, 0].bfloat16().item()
    assert r.eps_bf16 == torch.finfo(torch.bfloat16).eps
    assert 2.0 ** -(r.significant_bits_bf16 - 1) == torch.finfo(torch.bfloat16).eps
    assert r.product_autocast == _inside_autocast(lambda: i.a @ i.b)[0, 0].item()
    assert r.product_float64 == (i.a.double() @ i.b.double())[0, 0].item()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = F.mse_loss(F.linear(i.a, i.w), i.target)
    loss.backward()
    assert report.w_dtype == str(i.w.dtype) and report.grad_dtype == str(i.w.grad.dtype)
    assert report.itemsize_autocast == torch.empty((), dtype=torch.bfloat16).element_size()
    with pytest.raises(RuntimeError) as caught:
        i.a.bfloat16() @ i.b
    assert report.mixed_error == str(caught.value).strip()
    assert explain(caught.value).title == "The operands have different dtypes"


@pytest.mark.spawns
def test_the_autocast_script_prints_the_tables_dtypes(tmp_path):
    report = autocast_report(5)
    out = subprocess.run([sys.executable, "-c", report.code], capture_output=True, text=True,
                         timeout=120, check=True, cwd=tmp_path).stdout.splitlines()
    for line, row in zip(out, report.rows, strict=False):
        assert line == f"{row.code}: inside autocast {row.inside}, outside {row.outside}"
    assert len(OPS) == len(report.rows)
    assert f"w: {report.w_dtype} w.grad: {report.grad_dtype}" in out


# --- item 17: .detach() before .numpy() -----------------------------------------------------

def test_numpy_of_a_tensor_that_requires_grad_is_refused_with_pytorchs_error():
    report = detach_bridge(42)
    w = torch.arange(3.0, requires_grad=True)
    with pytest.raises(RuntimeError) as caught:
        w.numpy()
    assert report.grad_error == str(caught.value).strip()
    rows = {row.way: row for row in report.rows}
    assert rows["w.numpy()"].error_type == "RuntimeError"
    with pytest.raises(RuntimeError) as caught_result:
        (w * 2).numpy()
    assert rows["(w * 2).numpy()"].outcome == str(caught_result.value).strip()
    explained = explain(caught.value)
    assert "detach" in explained.explanation and any("detach()" in fix for fix in explained.fixes)


def test_detach_then_numpy_shares_memory_and_a_write_reaches_w():
    report = detach_bridge(42)
    rows = {row.way: row for row in report.rows}
    w = torch.arange(3.0, requires_grad=True)
    arr = w.detach().numpy()
    assert rows["arr = w.detach().numpy()"].shares_memory == (arr.ctypes.data == w.data_ptr())
    assert rows["arr = w.detach().numpy()"].outcome == repr(arr.tolist())
    forced = w.numpy(force=True)
    assert rows["w.numpy(force=True)"].shares_memory == (forced.ctypes.data == w.data_ptr())
    arr[0] = 42
    assert report.w_after_write == repr(w.detach().tolist())
    assert report.still_requires_grad == w.requires_grad


def test_a_tensor_outside_cpu_memory_is_refused_naming_its_device():
    report = detach_bridge(1, "cpu")          # no GPU chosen: meta stands in
    assert report.other_device == "meta"
    with pytest.raises(TypeError) as caught:
        torch.arange(3.0, device="meta").numpy()
    last = report.rows[-1]
    assert last.error_type == "TypeError" and last.outcome == str(caught.value).strip()


@pytest.mark.spawns
def test_the_detach_script_runs_and_prints_pytorchs_messages(tmp_path):
    report = detach_bridge(9)
    out = subprocess.run([sys.executable, "-c", report.code], capture_output=True, text=True,
                         timeout=120, check=True, cwd=tmp_path).stdout.splitlines()
    assert out[0] == report.grad_error
    assert out[1] == "True"
    assert out[-1] == report.rows[-1].outcome


def test_outside_autocast_only_the_matrix_product_refuses_mixed_dtypes():
    """The page says a matrix product refuses bfloat16 x float32 and elementwise ops promote."""
    import inspect as _inspect

    from app_pages.tensor_inspector import autocast as page

    a, b = torch.ones(2, 2).bfloat16(), torch.ones(2, 2)
    with pytest.raises(RuntimeError):
        a @ b
    assert (a + b).dtype == torch.float32 and (a * b).dtype == torch.float32
    source = _inspect.getsource(page)
    assert "nothing casts for you" not in source
    assert "Elementwise ops" in source and "promote" in source


def test_the_detached_words_say_shares_and_still_requires_grad_only_when_measured():
    """With PyTorch's real result the array shares w's memory; a report whose array had been a
    copy, of a w that no longer required grad, gets the other words."""
    import dataclasses

    from workbench.tensor_inspector.numpy_bridge import DETACHED

    report = detach_bridge(42)
    shared = report.detached_words(42)
    assert "still **shares** it" in shared and "and still requires grad (True)" in shared
    assert f"`w` holds `{report.w_after_write}`" in shared
    copied_rows = [dataclasses.replace(r, shares_memory=False) if r.way == DETACHED else r
                   for r in report.rows]
    copied = dataclasses.replace(report, rows=copied_rows, still_requires_grad=False)
    words = copied.detached_words(42)
    assert "**copy**" in words and "shares" not in words
    assert "no longer requires grad (False)" in words and "still requires" not in words
