"""The chain parser: only allowed methods with whole-number literals, and plain indexing."""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.tensor_inspector.chain import (
    ALLOWED_METHODS,
    MAX_SOURCE_LENGTH,
    MAX_STEPS,
    ChainSyntaxError,
    apply_step,
    format_chain,
    parse_chain,
)


@pytest.mark.parametrize("text, methods", [
    ("", []),
    ("t()", ["t"]),
    ("x.t().view(-1)", ["t", "view"]),
    (".t()", ["t"]),
    ("transpose(0,2).reshape(4,-1)[:, 1:3]", ["transpose", "reshape", None]),
    ("[::2]", [None]),
    ("x[0]", [None]),
    ("flatten(start_dim=1)", ["flatten"]),
    ("permute((0, 2, 1))", ["permute"]),
    ("permute([0, 2, 1])", ["permute"]),
    ("[..., None, 0]", [None]),
    ("  unsqueeze(0)  ", ["unsqueeze"]),
])
def test_accepts_chains_of_allowed_steps(text, methods):
    steps = parse_chain(text)
    assert [s.method for s in steps] == methods


def test_arguments_become_plain_python_values():
    steps = parse_chain("transpose(0, -1).flatten(start_dim=1)[1:3, ::2, None, ..., -1]")
    assert steps[0].args == (0, -1)
    assert steps[1].kwargs == (("start_dim", 1),)
    assert steps[2].index == (slice(1, 3, None), slice(None, None, 2), None, Ellipsis, -1)


@pytest.mark.parametrize("text", [
    "__class__()", "t().__class__", "os.system('ls')", "view(1.5)", "view(a)", "view(*a)",
    "view(2**3)", "view(1 + 1)", "t() + 1", "import os", "view(-1)(1)", "x", "['a']",
    "view(10**50)", "view(99999999999999999)", "__import__('os')", "view(True)", "view('1')",
    "view(x.numel())", "t().numpy()", "apply_(print)", "view(dtype=torch.int8)", "view(-1, **k)",
    "[lambda: 0]", "[x]", "T", "t", "[0:foo]", "view((1, (2, 3)))", "fill_(1)", "resize_(10**9)",
    "view(-1); import os", "y.t()", "t()[0]." ,
])
def test_rejects_anything_else(text):
    with pytest.raises(ChainSyntaxError):
        parse_chain(text)


def test_limits_on_length_and_steps():
    with pytest.raises(ChainSyntaxError, match="longer"):
        parse_chain("t()." * (MAX_SOURCE_LENGTH // 4 + 1) + "t()")
    with pytest.raises(ChainSyntaxError, match="at most"):
        parse_chain(".".join(["t()"] * (MAX_STEPS + 1)))


REFERENCES = {
    "view(-1)": lambda x: x.view(-1),
    "reshape(4, -1)": lambda x: x.reshape(4, -1),
    "transpose(0, 2)": lambda x: x.transpose(0, 2),
    "t()": lambda x: x[0].t(),
    "permute(2, 0, 1)": lambda x: x.permute(2, 0, 1),
    "movedim(0, -1)": lambda x: x.movedim(0, -1),
    "unsqueeze(1)": lambda x: x.unsqueeze(1),
    "squeeze()": lambda x: x.squeeze(),
    "flatten()": lambda x: x.flatten(),
    "unflatten(0, (1, 2))": lambda x: x.unflatten(0, (1, 2)),
    "contiguous()": lambda x: x.contiguous(),
    "expand(2, 2, 3, 4)": lambda x: x.expand(2, 2, 3, 4),
    "narrow(2, 1, 2)": lambda x: x.narrow(2, 1, 2),
    "select(1, 0)": lambda x: x.select(1, 0),
    "flip(0)": lambda x: x.flip(0),
    "clone()": lambda x: x.clone(),
}


def test_every_allowed_method_does_what_its_tensor_method_does():
    x = torch.arange(24.0).reshape(2, 3, 4)
    assert {text.split("(")[0] for text in REFERENCES} == set(ALLOWED_METHODS)
    for text, reference in REFERENCES.items():
        (step,) = parse_chain(text)
        source = x[0] if step.method == "t" else x
        result = apply_step(source, step)
        expected = reference(x)
        assert torch.equal(result, expected) and result.stride() == expected.stride(), text


chain_texts = st.lists(st.sampled_from([
    "t()", "view(-1)", "reshape(2, -1)", "transpose(0, 1)", "[:, 1:3]", "[::2]", "unsqueeze(0)",
    "squeeze()", "flatten(start_dim=1)", "permute(1, 0)", "[0]", "[..., None]", "narrow(0, 1, 2)",
]), max_size=6).map(lambda parts: ".".join(parts).replace(".[", "["))


@settings(max_examples=60, deadline=None)
@given(chain_texts)
def test_formatting_round_trips(text):
    steps = parse_chain(text)
    assert parse_chain(format_chain(steps)) == steps


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=60))
def test_any_text_either_parses_or_is_refused_with_a_reason(text):
    try:
        steps = parse_chain(text)
    except ChainSyntaxError as exc:
        assert str(exc)
    else:
        assert all(s.method in ALLOWED_METHODS or s.is_index for s in steps)
