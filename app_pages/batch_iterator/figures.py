"""The batch iterator's pictures: class counts per batch and the pipeline's stages (the
index grid is a table: grid.py; the dataset an SVG picture: dataset_picture.py).

Each function turns a `LoaderRun` (plain records from a real DataLoader) into a Plotly figure or
the pipeline's words; nothing here computes what PyTorch decides.
"""
from __future__ import annotations

import plotly.graph_objects as go

from components.figures import graph_scale, style_figure
from workbench.batches.runs import BatchRecord, LoaderRun
from workbench.batches.story import short_list
from workbench.common.palette import (
    BLACK,
    OKABE_ITO,
    TRANSPARENT,
)


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
