"""Tensor inspector through the router: a copy's note, the device fact, autocast and .detach().

Every expected value is computed here by PyTorch.
"""
from __future__ import annotations

import torch

from tests.app.apptest import assert_clean, open_page, shown_text

PAGE = "app_pages/tensor_inspector/page.py"


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_the_clone_note_shows_the_real_strides_and_the_row_major_fix_works():
    at = open_page(PAGE, query={"shape": "4,6", "ops": "t().clone().view(-1)"})
    assert_clean(at)
    x = torch.arange(24.0).reshape(4, 6)
    copy = x.t().clone()
    text = shown_text(at)
    note = next(m.value for m in at.markdown if "**2**" in m.value and "clone" in m.value)
    assert str(copy.stride()) in note and "preserve_format" in note
    assert ("**not** row-major" in note) == (not copy.is_contiguous())
    assert "row-major order" not in note
    try:
        copy.view(-1)
    except RuntimeError as exc:
        assert str(exc) in text
    fix = at.button(key="ti_chain_error_fix_2")
    assert "clone(memory_format=torch.contiguous_format)" in str(fix.label).replace("\\", "")
    fix.click().run()
    assert_clean(at)
    assert at.text_input(key="ti_ops").value == "t().clone(memory_format=torch.contiguous_format).view(-1)"
    assert _metrics(at)["stride"] == str(x.t().clone(memory_format=torch.contiguous_format)
                                         .view(-1).stride())


def test_every_step_shows_its_device():
    at = open_page(PAGE, query={"shape": "4,6", "ops": "t().flatten()"})
    assert_clean(at)
    x = torch.arange(24.0).reshape(4, 6)       # the inspector builds x on the learner's device
    table = at.table[0].value
    assert list(table["device"]) == [str(t.device) for t in (x, x.t(), x.t().flatten())]
    assert _metrics(at)["device"] == str(x.t().flatten().device)


def test_a_huge_tensor_shows_the_meta_device_it_was_described_on():
    at = open_page(PAGE, query={"shape": "10000,10000,10000"})
    assert _metrics(at)["device"] == str(torch.empty(0, device="meta").device)


def test_the_dtypes_tab_shows_autocast_dtypes_from_pytorch():
    at = open_page(PAGE, query={"seed": "4"})
    at.session_state["ti_more"] = "Dtypes"
    at.run()
    assert_clean(at)
    table = next(t.value for t in at.table if "dtype inside autocast" in t.value.columns)
    inside = dict(zip(table["op"].str.strip("`"), table["dtype inside autocast"], strict=True))
    g = torch.Generator().manual_seed(4)
    a, b = torch.randn(4, 8, generator=g), torch.randn(8, 3, generator=g)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        product, exp = a @ b, torch.exp(a)
    assert inside["a @ b"] == str(product.dtype)
    assert inside["torch.exp(a)"] == str(exp.dtype)
    text = shown_text(at)
    assert repr(product[0, 0].item()) in text         # the rounding line
    assert "faster" not in text.replace("Whether that is faster depends on the hardware", "")
    try:
        a.bfloat16() @ b
    except RuntimeError as exc:
        assert str(exc) in text


def test_the_numpy_tab_shows_pytorchs_error_for_a_tensor_that_requires_grad():
    at = open_page(PAGE)
    at.session_state["ti_more"] = "NumPy bridge"
    at.run()
    assert_clean(at)
    w = torch.arange(3.0, requires_grad=True)
    try:
        w.numpy()
    except RuntimeError as exc:
        message = str(exc)
    text = shown_text(at)
    assert message in text
    assert "w.detach().numpy()" in text
    arr = w.detach().numpy()
    arr[0] = at.number_input(key="ti_bridge_write").value
    assert repr(w.detach().tolist()) in text
