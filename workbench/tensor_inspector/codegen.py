"""The runnable script behind the Tensor inspector's current view.

A pure function of the settings (and of which step failed, if one did): running the script
prints, for x and each step of the chain, the same line `Facts.line` gives on the page, so a
test can compare the two. Sections are separated by `# %%` lines for a notebook export.
"""
from __future__ import annotations

from workbench.tensor_inspector.chain import ChainSyntaxError, parse_chain
from workbench.tensor_inspector.factory import factory_code, shape_text
from workbench.tensor_inspector.report import MAX_VALUES
from workbench.tensor_inspector.settings import TensorSettings

REPORT_FUNCTION = '''\
def same_storage(a, b):
    """Do two tensors read the same memory? Compare the storage addresses."""
    if a.is_meta or a.untyped_storage().data_ptr() == 0:
        # meta tensors (and empty ones) have no address: ask which tensor owns the storage
        return (a if a._base is None else a._base) is (b if b._base is None else b._base)
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def report(name, t, source=None):
    """Print the facts the Tensor inspector shows for one step."""
    storage_bytes = t.untyped_storage().nbytes()
    if source is None:
        memory = "new memory"
    elif t is source:
        memory = "same tensor"
    else:
        memory = "view" if same_storage(t, source) else "new memory"
    print(f"{name}: shape={tuple(t.shape)} dtype={t.dtype} device={t.device} stride={t.stride()} "
          f"offset={t.storage_offset()} contiguous={t.is_contiguous()} "
          f"numel={t.numel()} nbytes={t.nbytes} "
          f"storage={storage_bytes // t.element_size()} elements ({storage_bytes} bytes) "
          f"memory={memory}")
'''

ERRORS = "(RuntimeError, IndexError, ValueError, TypeError)"


def tensor_script(settings: TensorSettings, *, materialized: bool, failing_step: int | None,
                  device: str = "cpu") -> str:
    """The script for `settings`; `materialized` False builds x on `meta` (too big to allocate).
    `device`: where the page built x (the learner's device), so the script prints its facts."""
    lines = ['"""The tensor and op chain from the PyTorch Workbench\'s Tensor inspector.',
             "",
             "Each line printed is what the page shows: shape, dtype, device, stride, storage offset,",
             "contiguity, sizes in bytes, and whether a step is a view of its input or new memory.",
             '"""', "import torch", "", "", REPORT_FUNCTION, "# %% Build the tensor x"]
    if materialized:
        lines += factory_code(settings)
        if device != "cpu":
            lines.append(f'x = x.to("{device}")  # where the page put x; "cpu" on a machine '
                         "without that device")
    else:
        lines += [f"# {shape_text(settings.shape)} holds more than {MAX_VALUES:,} elements: the meta "
                  "device gives shapes,",
                  "# strides and errors without allocating any memory.",
                  f"x = torch.empty({shape_text(settings.shape)}, dtype=torch.{settings.dtype}, "
                  'device="meta")']
    lines.append('report("x", x)')
    if materialized and settings.fill not in ("empty", "empty_like"):
        lines.append("print(x)")
    try:
        steps = parse_chain(settings.ops)
    except ChainSyntaxError as exc:
        lines += ["", f"# The chain {settings.ops!r} could not be read: {exc}"]
        return "\n".join(lines) + "\n"
    if not steps:
        return "\n".join(lines) + "\n"
    lines += ["", "# %% The op chain, one step at a time"]
    body: list[str] = []
    name, label = "x", "x"
    for number, step in enumerate(steps, start=1):
        new_name = f"s{number}"
        new_label = label + step.code()
        body.append(f"{new_name} = {name}{step.code()}")
        body.append(f"report({new_label!r}, {new_name}, {name})")
        if failing_step == number:
            break
        name, label = new_name, new_label
    if failing_step is not None:
        lines.append("try:")
        lines += ["    " + line for line in body]
        lines.append(f"except {ERRORS} as err:")
        lines.append(f'    print("error in step {failing_step}:", err)  # PyTorch\'s own message')
    else:
        lines += body
        if materialized and settings.fill not in ("empty", "empty_like"):
            lines.append(f"print({name})")
    return "\n".join(lines) + "\n"

