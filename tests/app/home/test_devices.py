"""The home page's device check through the router: honest about what is simulated."""
from __future__ import annotations

import torch

from tests.app.apptest import assert_clean, open_page, shown_text
from workbench.common.device import best_device


def _other() -> torch.device:
    device = best_device()
    return device if device.type != "cpu" else torch.device("meta")


def test_the_page_says_plainly_what_stands_in_for_a_gpu():
    at = open_page()
    assert_clean(at)
    text = shown_text(at)
    if _other().type == "meta":
        assert "No GPU answers on this server" in text and "stands in for the GPU" in text
    else:
        assert "run on it for real" in text
    # nothing revealed before the learner commits
    try:
        torch.ones(2, 3) + torch.ones(2, 3, device=_other())
    except RuntimeError as exc:
        message = str(exc).splitlines()[0]
    assert message not in text


def test_committing_reveals_what_pytorch_did_with_each_pair():
    at = open_page()
    at.radio(key="kc_home_device_mismatch_choice").set_value("PyTorch raises an error").run()
    at.button(key="kc_home_device_mismatch_commit").click().run()
    assert_clean(at)
    other = _other()
    a, b = torch.ones(2, 3), torch.ones(2, 3, device=other)
    try:
        a + b
    except RuntimeError as exc:
        message = str(exc).splitlines()[0]
    table = next(t.value for t in at.table if "what PyTorch did" in t.value.columns)
    did = dict(zip(table["code"].str.strip("`"), table["what PyTorch did"], strict=True))
    # st.table cells are Markdown: compare with the backslash escapes removed
    plain = {code: value.replace("\\", "") for code, value in did.items()}
    assert plain["a + b"] == f"raised RuntimeError: {message}"
    assert plain["torch.tensor(2.0) + b"] == f"worked: a tensor of shape (2, 3) on {(2.0 + b).device}"
    if not torch.cuda.is_available():
        try:
            torch.ones(2, device="cuda")
        except (AssertionError, RuntimeError) as exc:
            no_cuda = str(exc).strip().splitlines()[0]
        assert any(no_cuda in value for value in plain.values())
