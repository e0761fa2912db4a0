"""The program box: the examples, the learner's own program (never silently lost), the help.

A learner's own program is one they typed: it matches no example and is not what the last
lesson link brought. When an example or a lesson link replaces one, the page keeps it in this
learner's state, says so, and offers it back.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import streamlit as st

from components.classroom import visible
from components.code_block import code_block
from components.code_keys import code_keys
from components.settings_form import SettingsForm
from components.state import learner_state
from workbench.autograd_graph.catalog import KEYWORDS, TENSOR_ATTRIBUTES, TENSOR_METHODS, TORCH_FUNCTIONS
from workbench.autograd_graph.language import DEFAULT_LIMITS
from workbench.autograd_graph.presets import PRESETS, PRESETS_BY_KEY, matching_preset
from workbench.autograd_graph.settings import AutogradSettings, preset_settings

CUSTOM = "custom"
PRESET_KEY = "ag_preset"
MAX_REMEMBERED_STEPS = 50


@dataclass
class Replaced:
    settings: AutogradSettings      # the learner's program with its backward settings
    by: str                         # what replaced it, in words


@dataclass
class AutogradWork:
    """This learner's work on the page that is not a setting: kept across sidebar navigation."""

    shown: AutogradSettings | None = None       # the settings on screen at the last run
    replaced: Replaced | None = None            # the own program an example or link replaced
    steps: dict[str, int] = field(default_factory=dict)   # step-through position per run
    traces: dict[str, int] = field(default_factory=dict)  # chosen backward() call per run
    linked_code: str = ""                       # the program the last lesson link brought
    collapsed: bool = False                     # the collapsed view of the graph is on

    def remember(self, table: dict[str, int], key: str, value: int) -> None:
        table.pop(key, None)
        table[key] = value
        while len(table) > MAX_REMEMBERED_STEPS:
            table.pop(next(iter(table)))


def work() -> AutogradWork:
    return learner_state("autograd_graph", AutogradWork)


def is_own_program(mine: AutogradWork, code: str) -> bool:
    return bool(code.strip()) and matching_preset(code) is None and code != mine.linked_code


def note_link(mine: AutogradWork, linked: AutogradSettings, from_link: bool) -> None:
    """A lesson link opened (or followed inside the app): keep the own program it replaces."""
    if not from_link:
        return
    before = mine.shown
    if before is not None and is_own_program(mine, before.code) and linked.code != before.code:
        mine.replaced = Replaced(before, "the lesson link you opened")
    mine.linked_code = linked.code


def _load_preset(form: SettingsForm[AutogradSettings], mine: AutogradWork) -> None:
    preset = PRESETS_BY_KEY.get(st.session_state[PRESET_KEY])
    if preset is None:
        return
    current = dataclasses.replace(form.settings(), code=st.session_state.get(form.key("code"), ""))
    if is_own_program(mine, current.code):
        mine.replaced = Replaced(current, f"the example *{preset.title}*")
    form.seed(preset_settings(preset, current.layout, current.saved))


def _undo(form: SettingsForm[AutogradSettings], mine: AutogradWork) -> None:
    if mine.replaced is None:
        return
    current = form.settings()
    form.seed(dataclasses.replace(mine.replaced.settings, layout=current.layout, saved=current.saved))
    mine.replaced = None


def program_editor(form: SettingsForm[AutogradSettings], mine: AutogradWork) -> str:
    """The examples and the program box (read-only when a classroom link hides `code`)."""
    if visible("code"):
        code_now = st.session_state.get(form.key("code"), form.linked.code) or ""
        current = matching_preset(code_now)
        st.session_state[PRESET_KEY] = current.key if current else CUSTOM
        st.selectbox("Start from an example", [p.key for p in PRESETS] + [CUSTOM], key=PRESET_KEY,
                     on_change=_load_preset, args=(form, mine),
                     format_func=lambda k: "your own program" if k == CUSTOM else PRESETS_BY_KEY[k].title)
    code = form.value("code", height=230, max_chars=form.table["code"].max_len)
    if visible("code"):
        code_keys(form.key("code"))
    else:
        code_block(code, language="python", line_numbers=True)
    _replaced_notice(form, mine, code)
    preset = matching_preset(code)
    if preset is not None and preset.lesson:
        st.caption(f":material/school: {preset.lesson}")
    language_help()
    return code


def _replaced_notice(form: SettingsForm[AutogradSettings], mine: AutogradWork, code: str) -> None:
    replaced = mine.replaced
    if replaced is None:
        return
    if replaced.settings.code == code:
        mine.replaced = None     # it is back
        return
    lines = len(replaced.settings.code.strip().splitlines())
    st.info(f"Your own program ({lines} line{'s' if lines != 1 else ''}) was replaced by "
            f"{replaced.by}. *Undo* brings it back.", icon=":material/history:")
    st.button("Undo: bring my program back", icon=":material/undo:", key="ag_undo",
              on_click=_undo, args=(form, mine))


def language_help() -> None:
    with st.expander("What you can write", icon=":material/help:"):
        st.markdown(
            "A small, safe subset of Python and PyTorch, run line by line by the page's own "
            "interpreter (never `eval`). One statement per line:\n"
            "- `name = expression`; in-place `name += ...`, `-=`, `*=`, `/=`\n"
            "- numbers, strings, lists; `+ - * / ** @` and unary minus; indexing `x[0]`, `x[:, 1]`\n"
            "- `with torch.no_grad():`, `with torch.inference_mode():` and `for i in range(k):` "
            f"(k up to {DEFAULT_LIMITS.max_loop_iterations}), indented blocks\n"
            "- comparisons `< <= > >= == !=` (chains such as `0 < x < 1` as in Python), "
            "`x is None`, `and`, `or`, `not`; `if`/`elif`/`else`, `a if c else b`, and "
            f"`while c:`, stopped after {DEFAULT_LIMITS.max_loop_iterations} rounds. A condition "
            "on a tensor calls `bool(tensor)`, so it needs one element (`.any()`, `.all()` say "
            "which you mean); the graph PyTorch records then depends on the values\n"
            "- `print(...)`, `t.backward()` (with `retain_graph=True` or a `gradient`), "
            "`t.grad.zero_()`, `t.retain_grad()`\n"
            f"- tensors up to {DEFAULT_LIMITS.max_numel:,} elements each, lists up to "
            f"{DEFAULT_LIMITS.max_numel:,} numbers and {DEFAULT_LIMITS.max_numel:,} lists inside "
            "(a list used twice counts twice); the run stops after "
            f"{DEFAULT_LIMITS.max_seconds:g} s or {DEFAULT_LIMITS.max_statements_run:,} statements\n"
            "- not accepted: imports, `def`, `lambda`, comprehensions, `break`, `try`, names or "
            "attributes starting with `_`")
        st.markdown("**torch functions:** " + ", ".join(f"`{n}`" for n in sorted(TORCH_FUNCTIONS)))
        st.markdown("**tensor methods:** " + ", ".join(f"`{n}`" for n in sorted(TENSOR_METHODS)))
        st.markdown("**tensor attributes:** " + ", ".join(f"`{n}`" for n in sorted(TENSOR_ATTRIBUTES))
                    + " · **keywords:** " + ", ".join(f"`{n}=`" for n in sorted(KEYWORDS)))
        st.caption("`torch.randn`/`torch.rand` draw from the page's own generator seeded with 0, so a "
                   "lesson link shows the same numbers to everyone.")
