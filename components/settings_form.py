"""A tool's widgets, drawn from its settings table, and the settings dataclass they describe.

One form per page run:

    linked, fresh = link_settings(TABLE, KEY)
    form = SettingsForm(TABLE, linked, fresh, prefix="mt_")
    form.draw("dataset", "n", "noise")        # wherever the page wants them
    settings = form.settings()                # every field: widget, or the link's when hidden

Each widget's session_state key is `<prefix><link name>`. It is seeded from the link when the
link is fresh, and whenever Streamlit dropped it (a widget not drawn in a run loses its state,
which is what happens when the learner visits another page). A control hidden by a classroom
link (`hide=...`) is not drawn and keeps the link's value. Text settings (shapes, layer widths)
are parsed by the table; a bad entry is reported and the last good value stays in use.
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import streamlit as st

from components.classroom import visible
from components.plain_text import code_span, md
from components.state import resend_widget_value
from workbench.common.links import (
    BoolParam,
    ChoiceParam,
    ChoiceSetParam,
    FloatParam,
    IntParam,
    LinkSchema,
    Param,
)

Settings = TypeVar("Settings")
TEXT_KINDS = ("text", "text_area")    # drawn as typed text, parsed by the table


def _keeps_last_valid(p: Param) -> bool:
    """A setting whose widget can hold a value the table refuses (typed text, an emptied set of
    choices), or that the page draws itself (kind `plane`, given by `change`): its last good
    value is kept beside the widget."""
    return p.kind in TEXT_KINDS or p.kind == "plane" or isinstance(p, ChoiceSetParam)


class SettingsForm(Generic[Settings]):
    def __init__(self, table: LinkSchema[Settings], linked: Settings, fresh: bool, *,
                 prefix: str) -> None:
        self.table, self.linked, self.prefix = table, linked, prefix
        self._values: dict[str, Any] = {}
        for p in table.params:
            key = self.key(p.name)
            if fresh or key not in st.session_state:
                st.session_state[key] = self._widget_value(p, getattr(linked, p.field))
            if _keeps_last_valid(p) and (fresh or self._valid_key(p.name) not in st.session_state):
                st.session_state[self._valid_key(p.name)] = getattr(linked, p.field)

    def key(self, name: str) -> str:
        return self.prefix + name

    def _valid_key(self, name: str) -> str:
        return f"{self.prefix}{name}::last_valid"

    @staticmethod
    def _widget_value(p: Param, value: Any) -> Any:
        if p.kind in TEXT_KINDS:
            return p.format(value)
        if isinstance(p, ChoiceSetParam):
            return list(value)          # st.pills holds a list
        return value

    def seed(self, settings: Settings) -> None:
        """Put `settings` into the widgets (a preset button's callback)."""
        for p in self.table.params:
            st.session_state[self.key(p.name)] = self._widget_value(p, getattr(settings, p.field))
            if _keeps_last_valid(p):
                st.session_state[self._valid_key(p.name)] = getattr(settings, p.field)

    def change(self, changes: dict[str, Any]) -> None:
        """Put these fields' values (by dataclass field name) into their widgets and leave the
        others as they are: a callback drawn by an earlier run than the last (outside a
        fragment) knows only that run's settings, and seeding them all would undo what the
        fragment's reruns changed since."""
        unknown = set(changes) - {p.field for p in self.table.params}
        if unknown:
            raise KeyError(f"not settings of this form: {sorted(unknown)}")
        for p in self.table.params:
            if p.field in changes:
                value = changes[p.field]
                st.session_state[self.key(p.name)] = self._widget_value(p, value)
                if _keeps_last_valid(p):
                    st.session_state[self._valid_key(p.name)] = value

    def draw(self, *names: str, **overrides: Any) -> None:
        """Draw these settings' widgets (skipping hidden ones); `overrides` go to the widget
        call, e.g. `disabled=True` or `label_visibility="collapsed"`."""
        for name in names:
            self.value(name, **overrides)

    def value(self, name: str, **overrides: Any) -> Any:
        """Draw one widget (unless hidden) and return its parsed value."""
        p = self.table[name]
        if not visible(name):
            value = getattr(self.linked, p.field)
        else:
            raw = self._widget(p, **overrides)
            value = self._parse(p, raw)
        self._values[p.field] = value
        return value

    def _widget(self, p: Param, **overrides: Any) -> Any:
        kind, key, w = p.kind, self.key(p.name), p.widget
        # Streamlit drops a widget's state when a run does not draw it (a fragment's rerun does
        # not run __init__ again to seed it): the last good value stands in, as for a bad entry.
        resend_widget_value(key, self._widget_value(p, self._last_good(p)))
        common: dict[str, Any] = {"key": key, "help": p.help or None, **overrides}
        label = common.pop("label", p.label)
        if isinstance(p, ChoiceParam):
            # `options=` narrows the table's choices for this run (e.g. one not available yet).
            options = list(common.pop("options", p.choices))
            fmt: Callable[[str], str] = p.choice_label
            if kind == "radio":
                return st.radio(label, options, format_func=fmt, horizontal=True, **common)
            if kind == "segmented":
                # required: a choice always has a value (a second click would otherwise
                # deselect it and the setting would fall back to the link's without a word).
                common.setdefault("required", True)
                return st.segmented_control(label, options, format_func=fmt, **common)
            return st.selectbox(label, options, format_func=fmt, **common)
        if isinstance(p, ChoiceSetParam):
            common.setdefault("on_change", functools.partial(self._refill_if_emptied, p))
            return st.pills(label, list(p.choices), selection_mode="multi",
                            format_func=p.choice_label, **common)
        if isinstance(p, BoolParam):
            return (st.checkbox if kind == "checkbox" else st.toggle)(label, **common)
        if isinstance(p, IntParam | FloatParam):
            is_int = isinstance(p, IntParam)
            step = w.step if w.step is not None else (1 if is_int else None)
            if is_int and step is not None:
                step = int(step)
            bounds = (p.lo, p.hi) if is_int else (float(p.lo), float(p.hi))
            if kind == "slider":
                return st.slider(label, *bounds, step=step, format=w.format, **common)
            return st.number_input(label, *bounds, step=step, format=w.format, **common)
        if kind == "text_area":
            return st.text_area(label, **common)
        return st.text_input(label, **common)

    def _parse(self, p: Param, raw: Any) -> Any:
        if isinstance(p, ChoiceParam):
            return raw if raw in p.choices else getattr(self.linked, p.field)
        if isinstance(p, ChoiceSetParam):
            picked = p.canonical(raw or ()) or self._last_good(p)
            if st.session_state.pop(self._emptied_key(p.name), False):
                st.info(f"{md(p.label)}: at least one is needed, so the last one stays picked.",
                        icon=":material/info:")
            st.session_state[self._valid_key(p.name)] = picked
            return picked
        if isinstance(p, BoolParam):
            return bool(raw)
        if isinstance(p, IntParam):
            return int(raw)
        if isinstance(p, FloatParam):
            # Widgets hand back binary floats (0.30000000000000004); links and code show 4
            # significant decimals' worth, so the settings compare equal after a round trip.
            return float(f"{float(raw):.6g}") + 0.0
        try:
            value = p.parse(str(raw))
        except ValueError as exc:
            value = self._last_good(p)
            shown = p.format(value) or "empty"
            st.error(f"{code_span(str(raw))}: {md(exc)}. Still using {code_span(shown)}.",
                     icon=":material/error:")
            return value
        st.session_state[self._valid_key(p.name)] = value
        return value

    def _emptied_key(self, name: str) -> str:
        return f"{self.prefix}{name}::emptied"

    def _refill_if_emptied(self, p: ChoiceSetParam) -> None:
        """Streamlit's multi-select pills can be emptied (`required` is single-select only): the
        last selection goes back into them, and the next run says why."""
        key = self.key(p.name)
        if not st.session_state.get(key):
            st.session_state[key] = list(self._last_good(p))
            st.session_state[self._emptied_key(p.name)] = True

    def _last_good(self, p: Param) -> Any:
        """A text setting's (or a set of choices') last value that parsed (the link's before
        any); for the others, the value this run drew or the link's."""
        if _keeps_last_valid(p):
            return st.session_state.get(self._valid_key(p.name), getattr(self.linked, p.field))
        return self._values.get(p.field, getattr(self.linked, p.field))

    def held(self, name: str) -> Any:
        """The value the form holds for `name` now, outside a run's drawing (a callback): a
        text setting's or a page-drawn one's last good value, else the last drawn or the link's."""
        return self._last_good(self.table[name])

    def reread(self) -> None:
        """Forget the values drawn so far, so that `settings()` reads every widget's stored
        value: in a fragment's rerun the widgets outside it are not drawn, and a callback (a
        fix button's `seed`) may have changed them since the page last ran."""
        self._values.clear()

    def settings(self, **computed: Any) -> Settings:
        """The settings dataclass: drawn widgets, the link's value for the rest (hidden or
        not drawn this run), and `computed` fields the page works out itself."""
        values: dict[str, Any] = {}
        for p in self.table.params:
            if p.field in self._values:
                values[p.field] = self._values[p.field]
            elif visible(p.name):
                values[p.field] = self._parse_quiet(p)
            else:
                values[p.field] = getattr(self.linked, p.field)
        values.update(computed)
        return dataclasses.replace(self.linked, **values)  # type: ignore[type-var]

    def _parse_quiet(self, p: Param) -> Any:
        """A widget not drawn this run: its stored value, parsed, or the last good one."""
        raw = st.session_state.get(self.key(p.name))
        if raw is None:
            return self._last_good(p)
        if isinstance(p, ChoiceSetParam):
            return p.canonical(raw) or self._last_good(p)
        if isinstance(p, IntParam | FloatParam | BoolParam | ChoiceParam):
            return self._parse(p, raw)
        return self._last_good(p)

