"""The batch iterator's pictures: class counts per batch and the pipeline's stages (the
index grid is a table: grid.py; the dataset an SVG picture: dataset_picture.py).

Each function turns a `LoaderRun` (plain records from a real DataLoader) into HTML or the
pipeline's words; nothing here computes what PyTorch decides.
"""
from __future__ import annotations

import html

from workbench.batch_iterator.runs import BatchRecord, LoaderRun
from workbench.batch_iterator.story import short_list
from workbench.common.palette import OKABE_ITO


CLASS_COUNTS_CLASS = "wb-class-counts"
CLASS_COLOURS = (OKABE_ITO[0], OKABE_ITO[1])      # class 0 blue, class 1 orange, as everywhere


def class_counts_html(run: LoaderRun) -> str:
    """Class 0 and class 1 in every batch, stacked, in the order the loader yields them: what
    WeightedRandomSampler changes. HTML bars, not a Plotly chart: the page's only Plotly
    figure made every new tab load and compile Plotly's 4.7 MB before Streamlit drew any of the
    page (bench/page_open.py, side by side: the first screen at 3.8 s with it and the page's
    st.dataframe tables, 2.3 s with neither). The bars are
    one picture to assistive technology (`role="img"`, named); their numbers are in the page's
    data table, and each bar's title says them on hover."""
    tallest = max((r.size for r in run.records), default=1) or 1
    bars = []
    for epoch in range(run.settings.epochs):
        columns = []
        for record in run.epoch_records(epoch):
            counts = record.class_counts()
            parts = "".join(
                f'<span style="height:{100 * count / tallest:.2f}%;background:{colour}"></span>'
                for count, colour in zip(counts, CLASS_COLOURS, strict=True) if count)
            title = (f"epoch {epoch}, batch {record.number}: {counts[0]} of class 0, "
                     f"{counts[1]} of class 1")
            columns.append(f'<div class="bar" title="{html.escape(title)}">{parts}</div>')
        bars.append(f'<div class="epoch" title="epoch {epoch}">{"".join(columns)}</div>')
    legend = "".join(f'<span class="key"><span style="background:{colour}"></span>class {cls}</span>'
                     for cls, colour in enumerate(CLASS_COLOURS))
    label = (f"Class 0 and class 1 samples in each of the {len(run.records)} batches, in the "
             "order the loader yields them, one group per epoch")
    return f"""<style>
figure.{CLASS_COUNTS_CLASS} {{ margin: 0; }}
figure.{CLASS_COUNTS_CLASS} .plot {{ display: flex; gap: 0.5rem; height: 10rem; align-items: stretch;
  border-bottom: 1px solid currentColor; border-left: 1px solid currentColor; padding-left: 2px; }}
figure.{CLASS_COUNTS_CLASS} .epoch {{ display: flex; flex: 1 1 0; gap: 1px; align-items: flex-end; }}
figure.{CLASS_COUNTS_CLASS} .bar {{ flex: 1 1 0; height: 100%; display: flex;
  flex-direction: column-reverse; min-width: 1px; }}
figure.{CLASS_COUNTS_CLASS} .bar > span {{ display: block; width: 100%; }}
figure.{CLASS_COUNTS_CLASS} figcaption {{ font-size: 0.8rem; display: flex; gap: 1.2rem;
  flex-wrap: wrap; margin-top: 0.3rem; }}
figure.{CLASS_COUNTS_CLASS} .key > span {{ display: inline-block; width: 0.8rem; height: 0.8rem;
  margin-right: 0.3rem; vertical-align: -0.1rem; }}
</style><figure class="{CLASS_COUNTS_CLASS}">
<div class="plot" role="img" aria-label="{html.escape(label)}">{"".join(bars)}</div>
<figcaption>{legend}<span>height: samples in the batch (the tallest is {tallest}); one group
of bars per epoch, left to right</span></figcaption></figure>"""


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
