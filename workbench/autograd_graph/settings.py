"""The autograd page's settings table: every control's link name, range, label and help, once.

Teachers type these link names into slides (`?code=...&backward=3&retain=1`): they never change.
The table drives the page's widgets (components/settings_form.py), the lesson links, `hide=`,
the share panel and docs/lesson-links.md's parameter table.
"""
from __future__ import annotations

from dataclasses import dataclass

from workbench.autograd_graph.language import DEFAULT_LIMITS
from workbench.autograd_graph.link_examples import program_example
from workbench.autograd_graph.presets import DEFAULT_PRESET, Preset
from workbench.common.links import BoolParam, ChoiceParam, IntParam, LinkSchema, TextParam, Widget

MAX_PAGE_BACKWARD = 10


@dataclass
class AutogradSettings:
    """What the page's widgets edit and the lesson link encodes."""

    code: str = DEFAULT_PRESET.code
    backward: int = 1
    retain: bool = False
    zero: bool = False
    layout: str = "TB"
    saved: bool = False


TABLE: LinkSchema[AutogradSettings] = LinkSchema(AutogradSettings, [
    TextParam("code", max_len=DEFAULT_LIMITS.max_source_chars, examples=program_example, label="Program",
              help="A subset of Python and PyTorch (see *What you can write*). Press Ctrl+Enter or "
                   "click outside to run it.",
              widget=Widget(kind="text_area"),
              meaning="the program, URL-encoded",
              readme_default="the first example, `y = w * x + b`, `L = (y - 10) ** 2`"),
    IntParam("backward", 0, MAX_PAGE_BACKWARD, label="Call `backward()` on the output this many times",
             help="After your program, the page calls output.backward() this many times. Programs "
                  "that call backward() themselves usually want 0 here.",
             meaning="how many times the page calls `backward()` on the program's output (the "
                     "last-assigned tensor with a `grad_fn`); none when the program calls "
                     "`backward()` itself"),
    BoolParam("retain", label="`retain_graph=True`",
              help="Keep the tensors the graph saved, so backward() can run through it again.",
              meaning="pass `retain_graph=True` to those calls (needed for a second call)"),
    BoolParam("zero", label="Zero the gradients before each call",
              help="Sets every leaf's .grad to None first, as optimizer.zero_grad() does.",
              meaning="set every leaf's `.grad` to None before each of those calls (the cure for "
                      "accumulation)"),
    ChoiceParam("layout", ["TB", "LR"], label="Layout",
                help="Draw the graph top to bottom or left to right.",
                widget=Widget(kind="segmented",
                              choice_labels={"TB": "top to bottom", "LR": "left to right"})),
    BoolParam("saved", label="Show saved tensors",
              help="What each node kept from the forward pass for its backward formula (PyTorch's "
                   "`grad_fn._saved_*`). backward() frees them unless retain_graph=True.",
              meaning="show what each node saved for its backward formula (`grad_fn._saved_*`)"),
])


def preset_settings(preset: Preset, layout: str = "TB", saved: bool = False) -> AutogradSettings:
    """The settings a preset stands for, keeping the learner's display choices."""
    return AutogradSettings(preset.code, preset.backward, preset.retain, preset.zero, layout, saved)
