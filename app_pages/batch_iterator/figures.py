"""The batch iterator's pictures: index grid, class counts per batch, the dataset, the pipeline.

Each function turns a `LoaderRun` (plain records from a real DataLoader) into a Plotly figure or
DOT text; nothing here computes what PyTorch decides.
"""
from __future__ import annotations

import plotly.graph_objects as go

from components.figures import graph_scale, presenting, style_figure
from workbench.batches.runs import BatchRecord, LoaderRun
from workbench.batches.story import short_list
from workbench.common.palette import (
    BLACK,
    GREY_250,
    GREY_400,
    GREY_450,
    GREY_800,
    OKABE_ITO,
    TRANSPARENT,
    VERMILION,
)

# Batch colours: Okabe & Ito without black, so the batch number stays readable on every cell.
BATCH_COLOURS = (*OKABE_ITO[:7], GREY_450)
CLASS_COLOURS = (GREY_250, GREY_800)
GAP_COLOUR = TRANSPARENT  # the theme shows through the gaps
MAX_CELL_TEXT = 60          # above this many samples a row is too narrow for numbers


def _stepped_scale(colours: tuple[str, ...]) -> list[list]:
    scale, k = [], len(colours)
    for i, colour in enumerate(colours):
        scale += [[i / k, colour], [(i + 1) / k, colour]]
    return scale


def _missing_reason(run: LoaderRun, epoch: int, index: int, pool: set[int]) -> str:
    settings = run.settings
    if index not in pool:
        return "not in the subset SubsetRandomSampler draws from"
    summary = run.summaries()[epoch]
    with_replacement = settings.sampler in ("replacement", "weighted")
    if summary.dropped > 0 and not with_replacement:
        return "drawn, but in the short last batch that drop_last=True threw away"
    if with_replacement:
        return "never drawn this epoch: sampling with replacement draws some twice, some never"
    return "not drawn this epoch"


def index_grid(run: LoaderRun, current: BatchRecord | None) -> go.Figure:
    """One row per epoch, one column per dataset index, each cell coloured by its batch."""
    n, epochs = run.dataset_size, run.settings.epochs
    show_text = n <= MAX_CELL_TEXT
    columns = list(range(n))
    pool = set(run.pool)
    fig = go.Figure()
    fig.add_trace(go.Heatmap(
        x=columns, y=[0], z=[list(run.labels)], zmin=-0.5, zmax=1.5,
        colorscale=_stepped_scale(CLASS_COLOURS), showscale=False, xgap=1, ygap=3,
        text=[[str(c) for c in run.labels]] if show_text else None,
        texttemplate="%{text}" if show_text else None,
        customdata=[[f"{run.lengths[i]}" for i in columns]],
        hovertemplate="index %{x} · class %{z} · length %{customdata}<extra></extra>",
        name="class"))

    z, text, hover = [], [], []
    for epoch in range(epochs):
        landed: dict[int, list[int]] = {}
        for record in run.epoch_records(epoch):
            for index in record.indices:
                landed.setdefault(index, []).append(record.number)
        row_z, row_text, row_hover = [], [], []
        for index in columns:
            batches = landed.get(index)
            if batches is None:
                row_z.append(None)
                row_text.append("")
                row_hover.append(f"index {index}: {_missing_reason(run, epoch, index, pool)}")
                continue
            row_z.append(batches[0] % len(BATCH_COLOURS))
            row_text.append(str(batches[0]) if len(batches) == 1 else f"{batches[0]}×{len(batches)}")
            drawn = ", ".join(str(b) for b in batches)
            row_hover.append(f"index {index} · epoch {epoch} · batch {drawn}"
                             + (f" ({len(batches)} times)" if len(batches) > 1 else ""))
        z.append(row_z)
        text.append(row_text)
        hover.append(row_hover)
    fig.add_trace(go.Heatmap(
        x=columns, y=list(range(1, epochs + 1)), z=z, zmin=-0.5, zmax=len(BATCH_COLOURS) - 0.5,
        colorscale=_stepped_scale(BATCH_COLOURS), showscale=False, xgap=1, ygap=3,
        text=text if show_text else None, texttemplate="%{text}" if show_text else None,
        customdata=hover, hovertemplate="%{customdata}<extra></extra>", name="batches"))
    # Cells that no batch holds: marked, so drop_last's casualties are visible at a glance.
    missing_x, missing_y, missing_hover = [], [], []
    for row, row_z in enumerate(z, start=1):
        for index, value in enumerate(row_z):
            if value is None and index in pool:
                missing_x.append(index)
                missing_y.append(row)
                missing_hover.append(hover[row - 1][index])
    if missing_x:
        fig.add_trace(go.Scatter(
            x=missing_x, y=missing_y, mode="markers", name="in no batch",
            marker={"symbol": "x-thin-open", "size": 10, "color": VERMILION,
                    "line": {"width": 2, "color": VERMILION}},
            customdata=missing_hover, hovertemplate="%{customdata}<extra></extra>"))
    if current is not None:
        # One layout update for all frames: add_shape validates the whole layout each call.
        frame = {"color": BLACK, "width": 3 * graph_scale()}
        fig.update_layout(shapes=[
            {"type": "rect", "x0": index - 0.5, "x1": index + 0.5, "y0": row - 0.5,
             "y1": row + 0.5, "line": frame}
            for index in sorted(set(current.indices)) for row in (0, current.epoch + 1)])
    row_height = 46 if presenting() else 36
    fig.update_layout(
        height=90 + row_height * (epochs + 1), showlegend=False, plot_bgcolor=GAP_COLOUR,
        yaxis={"tickvals": list(range(epochs + 1)),
               "ticktext": ["class"] + [f"epoch {e}" for e in range(epochs)],
               "autorange": "reversed", "showgrid": False, "zeroline": False},
        xaxis={"title": {"text": "dataset index"}, "showgrid": False, "zeroline": False,
               "range": [-0.5, n - 0.5], "dtick": 1 if n <= 30 else None},
    )
    if presenting():
        # The row names and index numbers are read from the back of the room too: as large as
        # the cells' numbers, not Streamlit's smaller tick size.
        ticks = {"tickfont": {"size": round(14 * graph_scale())}}
        fig.update_layout(xaxis=ticks, yaxis=ticks)
    return style_figure(fig, uirevision="batch_index_grid")


def class_counts_figure(run: LoaderRun, current: BatchRecord | None) -> go.Figure:
    """Class 0 and class 1 in every batch, stacked: what WeightedRandomSampler changes."""
    labels = [f"e{r.epoch}·b{r.number}" for r in run.records]
    fig = go.Figure()
    for cls, colour in enumerate((OKABE_ITO[0], OKABE_ITO[1])):
        fig.add_trace(go.Bar(x=labels, y=[r.class_counts()[cls] for r in run.records],
                             name=f"class {cls}", marker_color=colour,
                             hovertemplate=f"%{{x}}: %{{y}} of class {cls}<extra></extra>"))
    if current is not None:
        position = run.records.index(current)
        fig.add_vrect(x0=position - 0.5, x1=position + 0.5, line_width=2 * graph_scale(),
                      line_color=BLACK, fillcolor=TRANSPARENT)
    fig.update_layout(barmode="stack", height=260,
                      xaxis={"title": {"text": "batch (epoch · number)"},
                             "showticklabels": len(labels) <= 40, "type": "category"},
                      yaxis={"title": {"text": "samples in the batch"}},
                      legend={"traceorder": "normal"})
    return style_figure(fig, uirevision="batch_class_counts")


def dataset_figure(run: LoaderRun, features, current: BatchRecord | None) -> go.Figure:
    """The dataset itself (points by class, or sequence lengths) with the current batch ringed."""
    fig = go.Figure()
    chosen = set(current.indices) if current is not None else set()
    labels = run.labels
    if features is not None and getattr(features, "dim", lambda: 0)() == 2 \
            and features.shape[1] == 2:
        for cls in (0, 1):
            members = [i for i in range(run.dataset_size) if labels[i] == cls]
            fig.add_trace(go.Scatter(
                x=[float(features[i, 0]) for i in members],
                y=[float(features[i, 1]) for i in members], mode="markers",
                name=f"class {cls}", marker={"size": 8, "color": OKABE_ITO[cls]},
                text=[str(i) for i in members],
                hovertemplate="index %{text}<extra></extra>"))
        if chosen:
            picked = sorted(chosen)
            fig.add_trace(go.Scatter(
                x=[float(features[i, 0]) for i in picked], y=[float(features[i, 1]) for i in picked],
                mode="markers+text", name="this batch", text=[str(i) for i in picked],
                textposition="top center",
                marker={"size": 16, "symbol": "circle-open", "color": BLACK,
                        "line": {"width": 2.5}},
                hovertemplate="index %{text} (this batch)<extra></extra>"))
        fig.update_layout(xaxis={"title": {"text": "x[0]"}}, yaxis={"title": {"text": "x[1]"}})
    else:
        colours = [BLACK if i in chosen else CLASS_COLOURS[1] if labels[i] else GREY_400
                   for i in range(run.dataset_size)]
        fig.add_trace(go.Bar(x=list(range(run.dataset_size)), y=list(run.lengths),
                             marker_color=colours, name="length",
                             hovertemplate="index %{x}: length %{y}<extra></extra>"))
        fig.update_layout(xaxis={"title": {"text": "dataset index (black: this batch)"}},
                          yaxis={"title": {"text": "length of x"}})
    fig.update_layout(height=340, legend={"orientation": "h", "y": -0.3, "x": 0,
                                          "yanchor": "top"})
    return style_figure(fig, uirevision="batch_dataset")


def pipeline_stages(run: LoaderRun, current: BatchRecord | None, sampler_text: str,
                    batch_sampler_text: str, collate_text: str) -> list[tuple[str, str, str]]:
    """Dataset -> Sampler -> BatchSampler -> __getitem__ -> collate_fn -> batch: each stage's
    key, name and what it holds or did for the current batch (lines separated by newlines)."""
    indices = current.indices if current is not None else ()
    where = ("the main process" if current is None or current.worker < 0
             else f"worker {current.worker}")
    first = indices[0] if indices else 0
    tensors = current.tensors if current is not None else {}
    shapes = "\n".join(f"{k}: {list(v.shape)} {str(v.dtype).replace('torch.', '')}"
                       for k, v in tensors.items())
    classes = run.labels.count(0), run.labels.count(1)
    return [
        ("dataset", "Dataset", f"IndexedDataset\nlen = {run.dataset_size}\n"
                               f"class 0: {classes[0]}, class 1: {classes[1]}"),
        ("sampler", "Sampler", sampler_text),
        ("batch_sampler", "BatchSampler", f"{batch_sampler_text}\n→ {short_list(indices)}"),
        ("getitem", "__getitem__", f"dataset[{first}], …\n{len(indices)} calls in\n{where}"),
        ("collate", "collate_fn", collate_text),
        ("batch", "batch", f"epoch {current.epoch}, batch {current.number}\n{shapes}"
                           if current is not None else "no batch"),
    ]
