"""PyTorch's own error messages, each paired with a plain explanation and the usual fixes.

Errors a learner causes are part of the lesson: the page shows PyTorch's exact message, then
what it means. This is the app's one table of explanations, for tensor ops, autograd,
DataLoaders and checkpoints alike; refusals of the workbench's own (an upload that fails a
check, a program past a limit) are `ExplainedError`s of kind "Refused", and every one of them
is drawn by `components/error_panel.py`. The table is ordered; the first pattern found in the
message wins.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ExplainedError:
    title: str
    message: str
    explanation: str
    fixes: tuple[str, ...] = field(default_factory=tuple)
    kind: str = "Error"
    origin: str = "PyTorch"      # who raised it: "PyTorch", or "Python" itself (a name not defined)


@dataclass(frozen=True)
class Rule:
    pattern: str
    title: str
    explanation: str
    fixes: tuple[str, ...] = ()


# What a weights-only load accepts: the one wording of it, for PyTorch's own refusal (below)
# and for the workbench's refusal of an upload (workbench/moons_trainer/checkpoints.py).
WEIGHTS_ONLY = (
    "`torch.load(weights_only=True)` unpickles only tensors and plain containers (dicts, lists, "
    "tuples, numbers, strings); anything else would need other Python code to unpickle, possibly "
    "code that would run on this server."
)

RULES: tuple[Rule, ...] = (
    # --- layout ops (the tensor inspector's chain) ---------------------------------------------
    Rule(r"is out of bounds for dimension", "That index is past the end of the dimension",
         "Indices run from 0 to size-1 (or -size to -1 from the end). Slices are forgiving and "
         "stop at the end; a single index is not."),
    Rule(r"number of dimensions in the tensor input does not match",
         "permute needs every dimension exactly once",
         "`permute` takes a new order for all the dimensions, e.g. `permute(0, 2, 3, 1)` for a "
         "4-D tensor. To swap just two dimensions use `transpose(i, j)`."),
    Rule(r"only one dimension can be inferred", "Only one size may be -1",
         "`-1` asks PyTorch to work out that size from numel(); with two unknown sizes the "
         "answer is not unique."),
    Rule(r"expects a tensor with <= 2 dimensions", "t() is for matrices",
         "`t()` transposes a tensor of rank 0, 1 or 2. For more dimensions say which two to "
         "swap with `transpose(i, j)`, or give a full order with `permute`."),
    Rule(r"exceeds dimension size", "The window runs past the end",
         "`narrow(dim, start, length)` needs start + length <= size of that dimension."),
    Rule(r"start_dim cannot come after end_dim", "flatten's range is backwards",
         "`flatten(start_dim, end_dim)` merges dimensions start_dim..end_dim; start_dim must "
         "come first (after counting negative dims from the end)."),
    Rule(r"invalid combination of arguments", "These arguments do not fit this op",
         "PyTorch lists above the argument forms it accepts for this method."),
    Rule(r"missing 1 required positional", "An argument is missing",
         "PyTorch's message names the argument this method still needs."),
    # --- DataLoader ------------------------------------------------------------------------
    Rule(r"stack expects each tensor to be equal size",
         "default_collate cannot stack items of different lengths",
         "`default_collate` turns a list of items into one batch with `torch.stack`, which needs "
         "every tensor to have the same shape. These sequences have different lengths.",
         ("use a collate_fn that pads, e.g. with `torch.nn.utils.rnn.pad_sequence`",
          "or a batch_sampler that groups items of equal length")),
    Rule(r"prefetch_factor option could only be specified in multiprocessing",
         "prefetch_factor needs worker processes",
         "`prefetch_factor` is how many batches each worker prepares ahead. With `num_workers=0` "
         "the main process loads each batch when it is asked for, so there is nothing to "
         "prefetch.",
         ("set num_workers to 1 or more", "or leave prefetch_factor as None")),
    Rule(r"persistent_workers option needs num_workers > 0",
         "persistent_workers needs worker processes",
         "`persistent_workers=True` keeps worker processes alive between epochs. With "
         "`num_workers=0` there are none to keep.",
         ("set num_workers to 1 or more", "or leave persistent_workers=False")),
    Rule(r"batch_size=None option disables auto-batching", "batch_size=None turns batching off",
         "With `batch_size=None` the sampler's items go to `__getitem__` one by one with no "
         "batching, so there is no last batch for `drop_last` to drop.",
         ("drop `drop_last`", "or give a batch_size")),
    # --- everything else -------------------------------------------------------------------
    Rule(
        r"view size is not compatible with input tensor's size and stride",
        "view() needs memory it can reinterpret without copying",
        "`view` never copies: it only writes new sizes and strides over the same storage. "
        "After `transpose`, `t` or `permute` the elements of a row are no longer next to each "
        "other in memory, so no set of strides can describe the requested shape.",
        ("use `reshape(...)`, which copies only when it must",
         "call `.contiguous()` first, then `view(...)`"),
    ),
    Rule(
        r"shape '\[.*\]' is invalid for input of size",
        "The new shape holds a different number of elements",
        "`view` and `reshape` keep every element: the product of the new sizes must equal "
        "`numel()` of the tensor. One size may be `-1`; PyTorch then works it out.",
        ("check that the sizes multiply to numel()", "use -1 for one dimension"),
    ),
    Rule(
        r"Dimension out of range|dimension out of range",
        "That dimension does not exist",
        "Dimensions are numbered 0 to ndim-1, or from the end with -1 to -ndim. Asking for "
        "another number names a dimension the tensor does not have.",
        ("look at `.dim()` and `.shape` first",),
    ),
    Rule(
        r"Expected all tensors to be on the same device|is not on the expected device",
        "Tensors on different devices met in one operation",
        "An operation that computes needs every tensor on the same device (CPU, a GPU, "
        "MPS...), and PyTorch does not move one there for you.",
        ("move the model with `model.to(device)` and each batch with `x.to(device)`",),
    ),
    Rule(
        r"expected m1 and m2 to have the same dtype",
        "The operands have different dtypes",
        "Outside `torch.autocast`, a matrix product does not promote its operands: both must "
        "have the same dtype. Inside `torch.autocast` PyTorch casts them to the autocast dtype "
        "for you.",
        ("cast one side first, e.g. `a.to(b.dtype) @ b`",
         "or run the product inside `with torch.autocast(...)`"),
    ),
    Rule(
        r"Can't call numpy\(\) on Tensor that requires grad",
        "NumPy cannot take a tensor that autograd is tracking",
        "`.numpy()` hands NumPy the tensor's own memory, and NumPy records nothing for autograd, "
        "so PyTorch refuses a tensor that requires grad. `.detach()` gives a tensor on the same "
        "memory that is cut from the graph; its NumPy array still shares that memory.",
        ("`t.detach().numpy()`", "for a GPU tensor: `t.detach().cpu().numpy()` (a copy)"),
    ),
    Rule(
        r"mat1 and mat2 shapes cannot be multiplied|size mismatch, got input|"
        r"Expected size for first two dimensions of batch2|shapes cannot be multiplied|"
        r"must have same reduction dim",
        "Matrix product with inner sizes that differ",
        "`A @ B` needs the last size of A to equal the second-to-last size of B; the leading "
        "(batch) dimensions are broadcast.",
        ("transpose one operand", "check `.shape` of both sides"),
    ),
    Rule(
        r"must match the size of tensor .* at non-singleton dimension|"
        r"are not broadcastable|cannot be broadcast",
        "These shapes do not broadcast",
        "Broadcasting lines the shapes up from the right; at each position the sizes must be "
        "equal, or one of them must be 1 (it is then stretched).",
        ("`unsqueeze` a dimension of size 1 where one should be stretched",),
    ),
    Rule(
        r"expanded size of the tensor .* must match the existing size",
        "expand() can only stretch dimensions of size 1",
        "`expand` repeats a size-1 dimension by giving it stride 0, without copying. A "
        "dimension of another size cannot be expanded.",
        ("`repeat` copies data to tile any dimension",),
    ),
    Rule(
        r"Trying to backward through the graph a second time",
        "The graph was already freed by the first backward()",
        "To save memory, `backward()` frees the values it saved for the backward pass as soon "
        "as it has used them. A second `backward()` through the same graph finds them gone.",
        ("pass `retain_graph=True` to the first `backward()`",
         "or run the forward pass again to build a fresh graph"),
    ),
    Rule(
        r"element 0 of tensors does not require grad and does not have a grad_fn",
        "Nothing in this result requires a gradient",
        "`backward()` walks the graph recorded for tensors that require grad. This result was "
        "computed only from tensors with `requires_grad=False` (or under `torch.no_grad()`, "
        "or after `detach()`), so no graph was recorded.",
        ("create the leaf with `requires_grad=True`",
         "compute it outside `torch.no_grad()`"),
    ),
    Rule(
        r"grad can be implicitly created only for scalar outputs",
        "backward() without an argument needs a scalar",
        "The gradient of a scalar loss with respect to itself is 1, so PyTorch can start from "
        "there. For a tensor with several elements it would not know what to start from.",
        ("reduce it first: `y.sum().backward()` or `y.mean().backward()`",
         "or pass a gradient of the same shape: `y.backward(torch.ones_like(y))`"),
    ),
    Rule(
        r"modified by an inplace operation",
        "A tensor saved for backward was changed in place",
        "Autograd saved this tensor during the forward pass because its gradient formula needs "
        "it. An in-place operation (`+=`, `add_`, `x[0] = ...`) changed it afterwards, so the "
        "saved value is stale; each tensor's version counter caught it.",
        ("use an out-of-place operation (`x = x + 1`)", "or `clone()` before changing it"),
    ),
    Rule(
        r"a leaf Variable that requires grad is being used in an in-place operation",
        "In-place change of a leaf that requires grad",
        "Changing a parameter in place would be recorded in the graph. Manual updates such as "
        "`w -= lr * w.grad` belong inside `with torch.no_grad():`.",
        ("wrap the update in `with torch.no_grad():`",),
    ),
    Rule(
        r"sampler option is mutually exclusive with shuffle",
        "sampler and shuffle both decide the order",
        "`shuffle=True` is shorthand for a RandomSampler. When you pass your own `sampler`, it "
        "alone decides the order, so `shuffle` must stay False.",
        ("drop `shuffle=True`", "or drop the custom sampler"),
    ),
    Rule(
        r"batch_sampler option is mutually exclusive with",
        "batch_sampler already decides the batches",
        "A `batch_sampler` yields whole lists of indices, so it alone decides batch size, order "
        "and the last batch; `batch_size`, `shuffle`, `sampler` and `drop_last` must stay at "
        "their defaults.",
        ("pass only `batch_sampler`", "or use `batch_size`/`drop_last` without it"),
    ),
    Rule(
        r"Error\(s\) in loading state_dict",
        "The checkpoint does not fit this model",
        "`load_state_dict(strict=True)` checks that every parameter name and shape matches the "
        "model it loads into. Different layer sizes or names mean another architecture.",
        ("rebuild the model with the settings the checkpoint was trained with",),
    ),
    Rule(
        r"Weights only load failed|weights_only",
        "The file holds more than plain tensors",
        WEIGHTS_ONLY + " A checkpoint that needs more is refused.",
        ("save only the `state_dict`, or use safetensors",),
    ),
    # --- inference mode ------------------------------------------------------------------
    Rule(
        r"Inference tensors cannot be saved for backward",
        "An inference tensor entered a computation autograd records",
        "A tensor made inside `torch.inference_mode()` is an *inference tensor* "
        "(`t.is_inference()` is True). Inference mode skips the bookkeeping autograd relies on "
        "(version counters, views' history), which is why it can be faster than `no_grad`. Here "
        "autograd had to save such a tensor for the backward formula, and it cannot. "
        "A tensor made under `torch.no_grad()` is a normal tensor, and so is `clone()` of an "
        "inference tensor outside inference mode; `detach()` is not a way out (its result is "
        "still an inference tensor).",
        ("make that tensor under `torch.no_grad()` instead, if it meets autograd later",
         "or use a normal copy: `b.clone()` outside inference mode"),
    ),
    Rule(
        r"Setting requires_grad=True on inference tensor outside InferenceMode",
        "An inference tensor cannot start requiring grad",
        "Tensors made inside `torch.inference_mode()` carry none of the bookkeeping autograd "
        "needs, so PyTorch will not let one become a leaf that requires grad.",
        ("`t.clone().requires_grad_()` makes a normal tensor that can",),
    ),
    Rule(
        r"Inplace update to inference tensor outside InferenceMode",
        "An inference tensor cannot be changed in place outside inference mode",
        "Outside `torch.inference_mode()` an in-place change would need the version counter an "
        "inference tensor does not have, so PyTorch refuses it.",
        ("change a normal copy: `t = t.clone()` first", "or do the update inside inference mode"),
    ),
    # --- Python's truth value of a tensor, and the program's own names ----------------------
    Rule(
        r"Boolean value of Tensor with more than one value is ambiguous",
        "A tensor of several elements is neither true nor false",
        "`if`, `while`, `and`, `or`, `not` and chained comparisons such as `0 < x < 1` ask "
        "Python for one truth value, so they call `bool(tensor)`. With more than one element "
        "PyTorch cannot know whether you mean *every* element or *any* element, and refuses.",
        ("say which you mean: `(x > 0).all()` or `(x > 0).any()`",
         "or choose elementwise without `if`: `torch.where(x > 0, a, b)`"),
    ),
    Rule(
        r"name '.*' is not defined",
        "That name has no value yet",
        "Python runs the program top to bottom, and a name exists only once a line that assigns "
        "it has run. Check the spelling, and that its assignment comes first and really ran: a "
        "line inside an `if` branch that was not taken, or a loop that ran 0 times, assigns "
        "nothing.",
        ("assign the name before the line that uses it",),
    ),
    Rule(
        r"'NoneType' object has no attribute",
        "That value is None",
        "A method was called on None. The usual None in autograd code is a `.grad`: it stays "
        "None until a `backward()` has reached that leaf, and tensors that are not leaves keep "
        "no `.grad` at all (unless they call `retain_grad()`).",
        ("call `backward()` first", "or test it: `if w.grad is not None:`"),
    ),
    # Last: "timed out" is a loose pattern.
    Rule(r"DataLoader worker .* exited unexpectedly|timed out",
         "A worker process stopped answering",
         "The DataLoader waited for a worker longer than its `timeout`, or the worker died. On a "
         "busy server this can happen; the run was stopped instead of hanging.",
         ("try again with num_workers=0",)),
)

GENERIC_EXPLANATION = (
    "PyTorch refused this operation. Its message above says what it expected; the shapes, "
    "dtypes and devices of the tensors involved are the first things to check."
)


PYTHON_GENERIC_EXPLANATION = (
    "Python itself raised this, before PyTorch was asked anything: its message above says what "
    "it could not do with the values on that line."
)


def explain(exc: BaseException, *, origin: str = "PyTorch") -> ExplainedError:
    """The message of `exc` (raised by `origin`: PyTorch, or Python itself) with the first
    matching explanation from RULES."""
    message = str(exc).strip() or type(exc).__name__
    for rule in RULES:
        if re.search(rule.pattern, message):
            return ExplainedError(rule.title, message, rule.explanation, rule.fixes,
                                  type(exc).__name__, origin)
    generic = GENERIC_EXPLANATION if origin == "PyTorch" else PYTHON_GENERIC_EXPLANATION
    return ExplainedError(f"{origin} raised an error", message, generic, (), type(exc).__name__,
                          origin)


UNEXPECTED_EXPLANATION = (
    "Something went wrong inside the workbench itself, not in what you did. Nothing you typed "
    "was lost: change a setting or reload the page. The details were written to the server log."
)


UNEXPECTED_TITLE = "This page hit an unexpected error"


def unexpected(exc: BaseException) -> ExplainedError:
    """An error the page did not anticipate: a short, safe description, no traceback."""
    return ExplainedError(UNEXPECTED_TITLE, f"{type(exc).__name__}: {exc}"[:500],
                          UNEXPECTED_EXPLANATION, (), type(exc).__name__)
