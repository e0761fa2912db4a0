"""Each clause of the device rule the pages state (DEVICE_RULE), run against PyTorch on a second
device: a GPU where there is one, `meta` standing in where there is none (as the home page does)."""
import pytest
import torch

from workbench.common.device_checks import DEVICE_RULE
from workbench.common.errors import explain

OTHER = torch.device("cuda") if torch.cuda.is_available() else torch.device("meta")


def test_an_operation_that_computes_refuses_a_tensor_on_another_device():
    elsewhere = torch.ones(2, 3, device=OTHER)
    for compute in (lambda: torch.ones(2, 3) + elsewhere,
                    lambda: torch.nn.Linear(3, 1)(elsewhere),
                    lambda: torch.nn.functional.mse_loss(torch.ones(2, 3), elsewhere)):
        with pytest.raises(RuntimeError) as raised:
            compute()
        assert explain(raised.value).title == "Tensors on different devices met in one operation"
    assert "needs all its tensors on one device" in DEVICE_RULE


def test_a_zero_dim_cpu_tensor_joins_any_device():
    assert (torch.tensor(2.0) + torch.ones(2, device=OTHER)).device.type == OTHER.type
    with pytest.raises(RuntimeError):
        torch.tensor([2.0]) + torch.ones(2, device=OTHER)      # one element, but 1-dim
    assert "0-dim CPU tensor" in DEVICE_RULE


def test_copies_and_indexing_cross_devices_where_the_code_asks():
    """The old text said anything larger than 0-dim must be moved first: these do not."""
    target = torch.zeros(3, device=OTHER)
    target.copy_(torch.ones(3))
    target[:2] = torch.ones(2)
    picked = torch.arange(3.0, device=OTHER)[torch.tensor([0, 2])]
    assert {target.device.type, picked.device.type} == {OTHER.type}
    for words in ("`copy_()`", "slice assignment", "CPU index tensor may index"):
        assert words in DEVICE_RULE
