"""The batch iterator's lesson panels below the stepper: the pipeline for the current batch,
epoch by epoch, the worker pitfall, exclusive options, the cost of batching, gradient
accumulation and pin_memory."""
from __future__ import annotations

import dataclasses

import pandas as pd
import streamlit as st

from app_pages.batch_iterator.cards import pipeline_html
from app_pages.batch_iterator.figures import class_counts_html, pipeline_stages
from app_pages.batch_iterator.listings import items_listing, tensor_listing
from app_pages.batch_iterator.state import BatchPageState, Moons
from components.accessible_chart import data_table
from components.code_block import code_block
from components.error_panel import error_panel
from components.state import SharedModel
from workbench.batch_iterator import runs
from workbench.batch_iterator.accumulation import AccumulationResult, accumulation_data, compare_accumulation
from workbench.batch_iterator.cost import measure_batching_cost
from workbench.batch_iterator.datasets import make_dataset
from workbench.batch_iterator.exclusive import EXCLUSIVE_COMBINATIONS, try_exclusive
from workbench.batch_iterator.runs import (
    BatchRecord,
    LoaderRun,
    explain_loader_error,
    identical_streams,
    noise_by_worker,
)
from workbench.batch_iterator.settings import BatchSettings
from workbench.batch_iterator.story import describe_batch_sampler, describe_collate, describe_sampler
from workbench.common.jobs import SCHEDULER

# %% The pipeline, for this batch, and epoch by epoch -----------------------------------------

def pipeline_section(run: LoaderRun, current: BatchRecord, s: BatchSettings,
                     moons: Moons | None) -> None:
    st.header("The pipeline, for this batch", divider="gray")
    stages = pipeline_stages(run, current, describe_sampler(s, run.dataset_size),
                             describe_batch_sampler(s), describe_collate(s))
    # Six cards in two rows of three, as text (cards.py): they redraw in a few milliseconds when
    # Next moves to another batch (a graphviz drawing took half a second of each step).
    st.html(pipeline_html(stages))
    st.caption("The sampler yields indices in the main process; the batch sampler groups them; "
               "`__getitem__` and `collate_fn` run where the batch is built: in the main "
               "process with `num_workers=0`, in a worker process otherwise.")
    before, after = st.columns(2)
    with before:
        st.markdown("**`__getitem__` returns one item per index** (what `collate_fn` receives)")
        code_block(items_listing(make_dataset(s, moons), current), language="python")
    with after:
        st.markdown(f"**`{'pad_collate' if s.collate == 'pad' else 'default_collate'}"
                    "` makes one batch** (one tensor per key, a new first dimension)")
        code_block(tensor_listing(current), language="python")


def epochs_section(run: LoaderRun, s: BatchSettings) -> None:
    # Drawn once per DataLoader run, outside the batch view: a step leaves the counts as they are
    # (the current batch's own counts are in its box above).
    st.markdown("**Classes in each batch**, in the order the loader yields them")
    st.html(class_counts_html(run))
    data_table(lambda: pd.DataFrame([{"epoch": r.epoch, "batch": r.number,
                                      "class 0": r.class_counts()[0],
                                      "class 1": r.class_counts()[1]} for r in run.records]),
               key="bi_class_counts_table",
               label="Class 0 and class 1 samples in each batch, in the order the loader yields them")
    table = pd.DataFrame([{
        "epoch": e.epoch, "batches": e.batches, "samples seen": e.samples_seen,
        "unique samples": e.unique, "repeats": e.repeats, "dropped by drop_last": e.dropped,
        "never drawn": len(e.never_drawn), "class 0": e.class_counts[0],
        "class 1": e.class_counts[1],
        "class 1 share": f"{e.class_counts[1] / max(1, e.samples_seen):.0%}",
        "batch sizes": " ".join(str(b) for b in e.batch_sizes[:20])
        + (" …" if len(e.batch_sizes) > 20 else ""),
    } for e in run.summaries()])
    # st.table, here and below: an HTML table. st.dataframe's grid brings 1.2 MB of code (its
    # canvas grid and Arrow) that every new tab compiles before Streamlit draws the first screen.
    st.table(table, hide_index=True)
    dataset_share = run.labels.count(1) / run.dataset_size
    st.markdown(f"Class 1 is **{dataset_share:.0%}** of the dataset. "
                + ("`WeightedRandomSampler` draws each sample with weight 1 / (size of its "
                   "class), so both classes come up about equally often: the rare class is "
                   "**repeated**, the common one **left out** at random."
                   if s.sampler == "weighted" else
                   "Try `sampler=` WeightedRandomSampler (with shuffle off) to balance the "
                   "classes on average: each batch is still a random draw, so single batches "
                   "vary (the chart of every batch shows by how much)."
                   if s.batch_sampler == "none" else ""))


# %% Worker pitfall ---------------------------------------------------------------------------

PITFALL_SETTINGS = BatchSettings(n=12, batch_size=3, shuffle=False, num_workers=2, epochs=2,
                                 augment=True)


def _noise_table(run: LoaderRun) -> pd.DataFrame:
    return pd.DataFrame([{"epoch": s.epoch, "worker": s.worker,
                          "noise drawn, in order": ", ".join(f"{v:+.3f}" for v in s.values)}
                         for s in noise_by_worker(run)])


def _run_pitfall(page: BatchPageState) -> None:
    try:
        with SCHEDULER.turn():
            without = runs.run_loader(PITFALL_SETTINGS)
        with SCHEDULER.turn():
            with_fn = runs.run_loader(dataclasses.replace(PITFALL_SETTINGS, worker_init=True))
        page.pitfall, page.pitfall_error = (without, with_fn), ""
    except (RuntimeError, ValueError) as exc:
        page.pitfall_error = explain_loader_error(exc).message


def pitfall_section(page: BatchPageState, settings: BatchSettings, run: LoaderRun) -> None:
    st.subheader("Workers that draw the same random numbers")
    st.markdown(
        "Each worker process gets a **copy** of the dataset. A NumPy generator made in the "
        "dataset's `__init__` (for random crops, flips, noise) is copied in the same state, so "
        "every worker draws the **same** numbers, and without `persistent_workers` every epoch "
        "starts from the same state again. (Since PyTorch 1.9 the DataLoader reseeds the "
        "*global* `np.random` per worker; a generator you own is yours to seed.) "
        "`worker_init_fn` runs in each worker as it starts; `get_worker_info().seed` differs "
        "per worker and per epoch, so reseeding from it fixes the copies."
    )
    code_block("def seed_worker(worker_id):\n    info = torch.utils.data.get_worker_info()\n"
            "    info.dataset.rng = np.random.default_rng(info.seed % 2**32)\n\n"
            "DataLoader(dataset, num_workers=2, worker_init_fn=seed_worker, ...)",
            language="python")
    if settings.augment and settings.num_workers > 0:
        verdict = identical_streams(run)
        st.markdown(f"**This run** ({settings.num_workers} workers, `worker_init_fn` "
                    f"{'on' if settings.worker_init else 'off'}): repeated noise streams: "
                    f"**{'yes' if verdict else 'no'}**.")
        st.table(_noise_table(run), hide_index=True)
    st.button("Show it: 2 workers, without and with worker_init_fn", key="bi_pitfall_run",
              on_click=_run_pitfall, args=(page,), icon=":material/play_arrow:")
    if page.pitfall_error:
        st.warning(page.pitfall_error, icon=":material/hourglass_top:")
    if page.pitfall is not None:
        without, with_fn = page.pitfall
        left, right = st.columns(2)
        for column, result, title in ((left, without, "Without worker_init_fn"),
                                      (right, with_fn, "With worker_init_fn=seed_worker")):
            with column:
                same = identical_streams(result)
                st.markdown(f"**{title}**: repeated streams: **{'yes' if same else 'no'}**")
                st.table(_noise_table(result), hide_index=True)
    st.subheader("A last batch smaller than the rest")
    st.markdown(
        "When N is not a multiple of `batch_size`, the last batch is short (see the batch sizes "
        "above). A model with BatchNorm can fail on a batch of one, and a loss summed rather "
        "than averaged weighs that batch less. `drop_last=True` throws it away; with shuffling "
        "different samples are dropped each epoch (the ✕ cells in the grid), so none is lost "
        "for good."
    )


# %% Exclusive options ------------------------------------------------------------------------

def exclusive_section() -> None:
    st.markdown("`DataLoader` checks its options when it is built and raises a `ValueError` for "
                "combinations where two options would both decide the same thing. Pick one:")
    name = st.selectbox("Forbidden combination", list(EXCLUSIVE_COMBINATIONS), key="bi_exclusive")
    code, error = try_exclusive(name)
    code_block(code, language="python")
    if error is None:
        st.success("PyTorch accepted it.")
    else:
        error_panel(error, key="bi_exclusive_error")


# %% Cost of batching ---------------------------------------------------------------------------

def _measure(page: BatchPageState) -> None:
    page.cost = measure_batching_cost()


def cost_section(page: BatchPageState) -> None:
    st.markdown(
        "With `batch_size=32` the DataLoader calls `__getitem__` 32 times and then "
        "`default_collate` stacks the 32 results. A `TensorDataset` can instead index a whole "
        "list at once: pass a `BatchSampler` as the **sampler** and `batch_size=None`, and each "
        "`__getitem__` call receives a batch's index list. Same generator, same indices, same "
        "batches; measured now, on this server:")
    if page.cost is None:
        _measure(page)
    cost = page.cost
    assert cost is not None
    a, b, c, d = st.columns(4)
    a.metric("per sample + collate (µs/sample)", f"{cost.per_sample_us:.2f}")
    b.metric("whole batch at once (µs/sample)", f"{cost.whole_batch_us:.2f}")
    c.metric("ratio", f"{cost.ratio:.1f}×")
    d.metric("bare X[idx] loop (µs/sample)", f"{cost.bare_us:.2f}")
    st.caption(f"One epoch of {cost.samples} samples, batch_size={cost.batch_size}, best of 3. "
               f"Identical batches from both loaders: **{cost.same_batches}**. The bare loop "
               f"(`X[perm[i:i+32]]`, no DataLoader) {cost.bare_loop_words()}.")
    code_block("fast = DataLoader(dataset, batch_size=None, generator=g,\n"
            "                  sampler=BatchSampler(RandomSampler(dataset, generator=g), 32, "
            "drop_last=False))", language="python")
    st.button("Measure again", key="bi_measure", on_click=_measure, args=(page,),
              icon=":material/speed:")


# %% Gradient accumulation --------------------------------------------------------------------

def accumulation_section(run: LoaderRun | None, settings: BatchSettings,
                         moons: SharedModel) -> None:
    st.markdown(
        "When a batch of 32 does not fit in memory, run 4 micro-batches of 8: `backward()` on "
        "each **adds** into `.grad`, and one `optimizer.step()` follows. Scale each micro-batch's "
        "mean loss by its share (8/32) and the gradient is the one batch of 32 would give. "
        "Autograd is linear: the gradient of a sum is the sum of the gradients.")
    data = accumulation_data(run, settings, (moons.features, moons.labels) if moons.ready else None)
    features, labels, source = data.features, data.labels, data.source
    model = moons.model if settings.dataset == "moons" and moons.ready else None
    result: AccumulationResult = compare_accumulation(
        features, labels, micro_batches=4, model=model, seed=settings.seed,
        model_name=f"your trained moons model ({type(model).__name__})" if model is not None
        else None)
    st.table(pd.DataFrame([{
        "parameter": p.name, "shape": str(list(p.shape)),
        "‖grad‖ one batch of 32": f"{p.full_norm:.6f}",
        "‖grad‖ 4 × 8 accumulated": f"{p.accumulated_norm:.6f}",
        "max |difference|": f"{p.max_abs_difference:.2e}",
        "‖grad‖ if loss not scaled": f"{p.unscaled_norm:.6f}",
    } for p in result.parameters]), hide_index=True)
    sizes = " + ".join(str(s) for s in result.micro_batch_sizes)
    st.markdown(
        f"Model: {result.model_name}; data: {source}; micro-batches {sizes}. "
        f"`torch.allclose` on every gradient: **{result.allclose}** ({result.why_they_differ()}). "
        f"Loss: {result.loss_full:.6f} in one batch, {result.loss_accumulated:.6f} "
        "accumulated. Without the scaling, the gradient is "
        f"{len(result.micro_batch_sizes)}× too large.")
    code_block("optimizer.zero_grad()\nfor x, y in DataLoader(batch32, batch_size=8):\n"
            "    loss = F.cross_entropy(model(x), y) * len(y) / 32\n"
            "    loss.backward()        # adds into .grad\noptimizer.step()", language="python")
    st.caption("The autograd graph page shows the same rule node by node: gradients reaching a "
               "tensor from several paths are summed.")


# %% pin_memory -------------------------------------------------------------------------------

def pin_memory_section(run: LoaderRun | None) -> None:
    """Outside the batch view: `is_pinned()` is the same for every batch of a run."""
    first = run.records[0] if run is not None and run.records else None
    st.markdown(
        "`pin_memory=True` makes the DataLoader copy each batch into *page-locked* host memory. "
        "The GPU can read page-locked memory directly, so `batch.to('cuda', non_blocking=True)` "
        "can overlap the copy with computation. On a machine without an accelerator there is "
        "nothing to overlap with: PyTorch warns and leaves the batch where it is"
        + (f" (this run's batches: `x.is_pinned()` = `{first.tensors['x'].is_pinned()}`)."
           if first is not None else "."))
