import pytest
import torch

from workbench.common.device import (
    AUTO,
    best_device,
    configure_threads,
    device_choices,
    diagnose,
    resolve_choice,
)
from workbench.common.errors import explain, unexpected
from workbench.common.formatting import human_bytes


def test_best_device_follows_cuda_then_mps_then_cpu():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    if not torch.cuda.is_available() and torch.backends.mps.is_available():
        expected = "mps"
    assert best_device().type == expected


def test_learner_may_always_choose_the_cpu():
    assert resolve_choice("cpu", torch.device("cuda")) == torch.device("cpu")
    assert resolve_choice(AUTO, torch.device("cuda")) == torch.device("cuda")
    assert resolve_choice("nonsense", torch.device("cpu")) == torch.device("cpu")
    assert device_choices(torch.device("cuda")) == [AUTO, "cpu"]
    assert device_choices(torch.device("cpu")) == [AUTO]


def test_threads_are_set_to_one_for_the_server():
    assert configure_threads() == 1 == torch.get_num_threads()


def test_diagnostics_are_what_torch_reports():
    d = diagnose(torch.device("cpu"))
    assert d.torch_version == torch.__version__
    assert d.cuda_available == torch.cuda.is_available()
    assert d.selected == "cpu"
    assert dict(d.rows())["torch.get_num_threads()"] == str(torch.get_num_threads())


def _raise(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001
        return exc
    raise AssertionError("expected PyTorch to raise")


@pytest.mark.parametrize("make_error,title_word", [
    (lambda: torch.arange(6).view(2, 3).t().view(-1), "view()"),
    (lambda: torch.arange(6).view(4, 2), "number of elements"),
    (lambda: torch.ones(2).sum(5), "dimension"),
    (lambda: torch.ones(2, 3) @ torch.ones(2, 3), "inner sizes"),
    (lambda: torch.ones(2, 3) + torch.ones(4), "broadcast"),
    (lambda: torch.ones(2, requires_grad=True).mul(2).backward(), "scalar"),
    (lambda: torch.ones(2).sum().backward(), "requires a gradient"),
    (lambda: torch.ones(2, device="cpu") + torch.ones(2, device="meta"), "devices"),
])
def test_pytorchs_own_messages_get_their_explanation(make_error, title_word):
    exc = _raise(make_error)
    explained = explain(exc)
    assert explained.message == str(exc).strip()
    assert title_word in explained.title


def test_backward_twice_is_explained():
    w = torch.tensor(3.0, requires_grad=True)
    loss = w.exp() * 2
    loss.backward()
    explained = explain(_raise(loss.backward))
    assert "retain_graph=True" in " ".join(explained.fixes)


def test_unexpected_errors_show_no_traceback():
    explained = unexpected(KeyError("x"))
    assert "Traceback" not in explained.message and "KeyError" in explained.message


@pytest.mark.parametrize("n,text", [(0, "0 B"), (1023, "1023 B"), (1536, "1.5 KiB"),
                                    (16384, "16 KiB"), (4 * 10**12, "3.64 TiB")])
def test_human_bytes(n, text):
    assert human_bytes(n) == text


def test_the_inference_tensor_explanation_offers_only_ways_out_that_work():
    """detach() keeps an inference tensor one (the same error comes back); clone() outside
    inference mode and a tensor made under no_grad() are normal tensors."""
    with torch.inference_mode():
        made = torch.ones(2)
    w = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError) as raised:
        (w * made).sum().backward()
    explained = explain(raised.value)
    assert explained.title == "An inference tensor entered a computation autograd records"
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved"):
        (w * made.detach()).sum().backward()
    assert "`detach()` is not a way out" in explained.explanation
    (w * made.clone()).sum().backward()
    with torch.no_grad():
        normal = torch.ones(2)
    (w * normal).sum().backward()
    assert "clone()" in explained.explanation and "no_grad()" in explained.explanation
