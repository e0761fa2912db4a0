"""A Plotly chart that can be read without seeing it: an accessible name and a data table.

`chart(fig, key=..., label=...)` draws the figure with `label` as its accessible name
(`st.plotly_chart(alt=...)`: Streamlit 1.67 puts `role="figure"` and `aria-label` on the chart's
container) and, under it, a closed expander "Data table: <label>" holding an `st.table` of the
figure's numbers (an HTML table: a screen reader moves through it by row and column, and Ctrl+F
finds a number; `st.dataframe` draws on a canvas). The table is `figure_table(fig)`, read from the
figure's own traces, unless the page passes a better one (`table=`): a frame, or a function
that builds it.

**Cost.** The expander is lazy (`on_change="rerun"`): while it is closed the table is neither
built nor sent, so a page's reruns (the tensor inspector's click-to-paint) carry one small
expander element per chart and nothing more. Opening it reruns the page once; from then on the
table travels with each rerun, and it holds only what the figure draws (at most a few hundred
rows: every figure here is bounded by the page that builds it).

`when_open(title, key=...)` is the same lazy expander for any other text alternative (a graph's
outline): it returns the expander to draw in when it is open, None when it is closed.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from components.figures import PLOTLY_CONFIG
from components.plain_text import md

TableSource = pd.DataFrame | Callable[[], pd.DataFrame] | None
TABLE_ICON = ":material/table_chart:"


def chart(fig: go.Figure, *, key: str, label: str, table: TableSource = None,
          table_below: bool = True, **plotly: Any) -> None:
    """`st.plotly_chart(fig, key=key)` named `label` for assistive technology, with its data
    table in a closed expander under it. `table`: the figure's numbers as the page knows them
    (default: `figure_table(fig)`); `table_below=False` leaves the table to a `data_table` call
    elsewhere (a chart that must stand alone in its box); `plotly`: more `st.plotly_chart`
    arguments (width, height)."""
    plotly.setdefault("config", PLOTLY_CONFIG)
    st.plotly_chart(fig, key=key, alt=label, **plotly)
    if table_below:
        data_table(fig if table is None else table, key=f"{key}_table", label=label)


def data_table(table: go.Figure | TableSource, *, key: str, label: str) -> None:
    """The closed "Data table: <label>" expander; the table is built only when it is open."""
    # An expander's title is Markdown: the label (a typed op chain, say) is escaped to read as typed.
    box = when_open(f"Data table: {md(label)}", key=key, icon=TABLE_ICON)
    if box is None:
        return
    if isinstance(table, go.Figure):
        frame = figure_table(table)
    elif callable(table):
        frame = table()
    else:
        frame = table if table is not None else pd.DataFrame()
    # A column that mixes numbers and text (a heatmap's blank cells) is shown as text: Arrow
    # refuses mixed columns, and Streamlit would log a traceback before converting them itself.
    text = [c for c in frame.columns if pd.api.types.is_object_dtype(frame[c])]
    if text:
        frame = frame.assign(**{c: ["" if v is None else str(v) for v in frame[c]] for c in text})
    with box:
        if frame.empty:
            st.caption("This figure draws no numbers.")
        else:
            st.table(frame, hide_index=True, alt=label)


def when_open(title: str, *, key: str, icon: str | None = None):
    """A closed expander that runs its content only when a learner opens it: the expander when
    it is open, None when it is closed (nothing inside it is built or sent then)."""
    box = st.expander(title, key=key, icon=icon, on_change="rerun")
    return box if box.open else None


# ------------------------------------------------------------------ the table of a figure

def _values(data: Any) -> list:
    if data is None:
        return []
    if hasattr(data, "tolist"):
        return list(data.tolist())
    return list(data)


def _axis(fig: go.Figure, ref: str | None, letter: str) -> Any:
    """The layout axis a trace is drawn on: `x2` -> `layout.xaxis2`."""
    suffix = (ref or letter)[1:]
    return fig.layout[f"{letter}axis{suffix}"]


def _axis_title(fig: go.Figure, ref: str | None, letter: str) -> str:
    title = _axis(fig, ref, letter).title
    return (title.text or "") if title is not None else ""


def _subplot_title(fig: go.Figure, trace: Any) -> str:
    """make_subplots' title of the panel the trace is drawn in (an annotation centred over its
    x domain), or "" for a figure of one panel."""
    axis = _axis(fig, getattr(trace, "xaxis", None), "x")
    domain = axis.domain or (0, 1)
    if tuple(domain) == (0, 1):
        return ""
    for note in fig.layout.annotations or ():
        if note.xref == "paper" and note.text and domain[0] <= (note.x or 0) <= domain[1]:
            return note.text
    return ""


def _ticks(fig: go.Figure, ref: str | None, letter: str, count: int, coords: list) -> list[str]:
    """Labels of a heatmap's rows or columns: the axis's tick texts where it names them, the
    trace's own coordinates, or the positions 0, 1, ..."""
    axis = _axis(fig, ref, letter)
    names = [str(c) for c in coords] if len(coords) == count else [str(i) for i in range(count)]
    if axis.tickvals is not None and axis.ticktext is not None:
        lookup = dict(zip(_values(axis.tickvals), _values(axis.ticktext), strict=False))
        names = [str(lookup.get(c if len(coords) == count else i, names[i]))
                 for i, c in enumerate(coords if len(coords) == count else range(count))]
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return unique


def _heatmap_table(fig: go.Figure, trace: Any) -> pd.DataFrame:
    """A heatmap as the grid it draws: one row per row, one column per column; a cell holds
    its text where the figure writes one, else its value."""
    z = [_values(row) for row in _values(trace.z)]
    text = [_values(row) for row in _values(trace.text)] if trace.text is not None else []
    rows, cols = len(z), max((len(r) for r in z), default=0)
    row_names = _ticks(fig, trace.yaxis, "y", rows, _values(trace.y))
    col_names = _ticks(fig, trace.xaxis, "x", cols, _values(trace.x))
    records = []
    for r in range(rows):
        record: dict[str, Any] = {_axis_title(fig, trace.yaxis, "y") or "row": row_names[r]}
        for c in range(cols):
            if text:             # what the cell shows: its text, or nothing
                record[col_names[c]] = text[r][c] if c < len(text[r]) else ""
            else:
                record[col_names[c]] = z[r][c] if c < len(z[r]) and z[r][c] is not None else ""
        records.append(record)
    return pd.DataFrame(records)


def _series(fig: go.Figure, trace: Any, number: int, many: bool) -> tuple[str, str, list, list]:
    """(key column, value column, keys, values) of a scatter or bar trace; a horizontal bar's
    key is its y."""
    horizontal = getattr(trace, "orientation", None) == "h"
    keys, values = _values(trace.y if horizontal else trace.x), _values(trace.x if horizontal else trace.y)
    if not keys:
        keys = list(range(len(values)))
    key_axis, value_axis = ("y", "x") if horizontal else ("x", "y")
    key_name = _axis_title(fig, getattr(trace, f"{key_axis}axis", None), key_axis) or key_axis
    name = trace.name if many and trace.name else \
        _axis_title(fig, getattr(trace, f"{value_axis}axis", None), value_axis) or trace.name or value_axis
    panel = _subplot_title(fig, trace)
    return key_name, f"{panel}: {name}" if panel else name, keys, values


def figure_table(fig: go.Figure) -> pd.DataFrame:
    """The numbers `fig` draws, as a table, read from its traces: a heatmap as its grid of
    cells; line, scatter and bar traces as one row per x (per y for horizontal bars) and one
    column per trace, named after the axis titles, the traces' names and the subplot titles.
    Traces that do not share their x values, or repeat one, are listed one point per row."""
    traces = list(fig.data)
    heatmaps = [t for t in traces if t.type == "heatmap"]
    if heatmaps:
        return pd.concat([_heatmap_table(fig, t) for t in heatmaps], ignore_index=True)
    many = len(traces) > 1
    series = [_series(fig, t, i, many) for i, t in enumerate(traces)
              if t.type in ("scatter", "scattergl", "bar")]
    if not series:
        return pd.DataFrame()
    key_names = {s[0] for s in series}
    names = [s[1] for s in series]
    shared = (len(key_names) == 1 and len(set(names)) == len(names)
              and all(len(set(map(str, keys))) == len(keys) for _, _, keys, _ in series))
    if shared:
        key_name = key_names.pop()
        order: dict[str, Any] = {}              # every x in the order first drawn
        columns: dict[str, dict[str, Any]] = {}
        for _, name, keys, values in series:
            columns[name] = {str(k): v for k, v in zip(keys, values, strict=False)}
            for k in keys:
                order.setdefault(str(k), k)
        return pd.DataFrame([{key_name: k, **{name: column.get(text) for name, column in
                                              columns.items()}} for text, k in order.items()])
    return pd.DataFrame([{"series": name, key_name: k, "value": v}
                         for key_name, name, keys, values in series
                         for k, v in zip(keys, values, strict=False)])
