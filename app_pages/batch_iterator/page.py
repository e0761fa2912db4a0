"""Batch iterator: Dataset, Sampler, BatchSampler, collate_fn and DataLoader, batch by batch."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.batch_iterator.figures import (
    class_counts_figure,
    dataset_figure,
    index_grid,
    pipeline_dot,
)
from app_pages.batch_iterator.panels import (
    BatchPageState,
    accumulation_section,
    cost_section,
    exclusive_section,
    items_listing,
    knowledge_section,
    pitfall_section,
    tensor_listing,
)
from components.classroom import share_panel, visible
from components.code_panel import code_panel
from components.error_panel import error_panel
from components.figures import PLOTLY_CONFIG, presenting, prose
from components.lesson_link import link_settings, publish_link
from components.state import learner_state, session_id, shared_model
from workbench.batches.codegen import loader_script, record_line
from workbench.batches.loader import (
    LINK_SCHEMA,
    MAX_BATCH,
    MAX_EPOCHS,
    MAX_N,
    MAX_NUM_SAMPLES,
    MIN_N,
    BatchSettings,
    describe_batch_sampler,
    describe_collate,
    describe_sampler,
    explain_loader_error,
    grid_story,
    make_dataset,
    run_loader,
)
from workbench.common.jobs import HEAVY_JOBS, busy_message

KEY = "batch_iterator"
SAMPLER_LABELS = {
    "default": "None (DataLoader picks one from shuffle)",
    "sequential": "SequentialSampler",
    "random": "RandomSampler",
    "replacement": "RandomSampler(replacement=True)",
    "subset": "SubsetRandomSampler (3 of every 4)",
    "weighted": "WeightedRandomSampler (balance classes)",
}
DATASET_LABELS = {"points": "Points: 2 features, 2 classes",
                  "sequences": "Sequences of different lengths",
                  "moons": "Your moons training split"}

st.title("Batch iterator")
prose(
    "A real `torch.utils.data.DataLoader` runs on this server with your settings, and every "
    "batch it yields is shown: which samples it drew, in which order, built by which process. "
    "Change a setting and see why the **second epoch differs from the first**, **where "
    "`drop_last` puts the short batch**, and **how `WeightedRandomSampler` balances the classes**."
)

settings, fresh = link_settings(LINK_SCHEMA, KEY)
page = learner_state(KEY, BatchPageState)
moons = shared_model()
moons_ready = bool(moons.ready)

FIELDS = {  # widget key -> settings field
    "bi_dataset": "dataset", "bi_n": "n", "bi_minority": "minority_percent",
    "bi_augment": "augment", "bi_sampler": "sampler", "bi_shuffle": "shuffle",
    "bi_num_samples": "num_samples", "bi_seed": "seed", "bi_batch": "batch_size",
    "bi_drop_last": "drop_last", "bi_batch_sampler": "batch_sampler", "bi_collate": "collate",
    "bi_workers": "num_workers", "bi_worker_init": "worker_init", "bi_prefetch": "prefetch_factor",
    "bi_persistent": "persistent_workers", "bi_pin_memory": "pin_memory", "bi_epochs": "epochs",
}
for widget_key, field_name in FIELDS.items():
    # Seed from the link when it is fresh; otherwise keep a value for widgets drawn only
    # sometimes (Streamlit forgets the value of a widget that was not drawn in a run).
    if fresh or widget_key not in st.session_state:
        st.session_state[widget_key] = getattr(settings, field_name)
if settings.dataset == "moons" and not moons_ready:
    st.warning("`dataset=moons` needs a trained model: train one on the Moons trainer page "
               "first. The points dataset is used meanwhile.", icon=":material/info:")
    st.session_state["bi_dataset"] = "points"


def _fix(**changes) -> None:
    for widget_key, field_name in FIELDS.items():
        if field_name in changes:
            st.session_state[widget_key] = changes[field_name]


def control(param: str, widget_key: str, draw):
    """Draw the control behind lesson-link parameter `param`, unless the link hides it."""
    if visible(param):
        return draw()
    return st.session_state[widget_key]


controls, main = st.columns([1.25, 2.6] if presenting() else [1, 2.6], gap="medium")
with controls:
    st.subheader("Dataset", divider="gray")
    dataset_options = ["points", "sequences"] + (["moons"] if moons_ready else [])
    if st.session_state["bi_dataset"] not in dataset_options:  # the trained model went away
        st.session_state["bi_dataset"] = "points"
    dataset_name = control("dataset", "bi_dataset", lambda: st.selectbox(
        "Dataset", dataset_options, key="bi_dataset", format_func=DATASET_LABELS.get,
        help="Each item is a dict {index, x, y}: it says which sample it is and its class."))
    if dataset_name != "moons":
        n = control("n", "bi_n", lambda: st.slider(
            "Samples N", MIN_N, MAX_N, key="bi_n", help="len(dataset)"))
        minority = control("minority", "bi_minority", lambda: st.slider(
            "Class 1 share (%)", 5, 50, key="bi_minority",
            help="Class imbalance: the WeightedRandomSampler lesson needs a rare class."))
    else:
        n, minority = settings.n, settings.minority_percent
        st.caption(f"{moons.description or 'Your moons training split'}: labels and scaled "
                   "features from the Moons trainer.")
    augment = control("augment", "bi_augment", lambda: st.toggle(
        "Random augmentation", key="bi_augment",
        help="Each item carries `noise` from the dataset's own np.random.Generator, as a random "
             "crop or flip would. See the worker pitfall below."))

    st.subheader("Order", divider="gray")
    sampler = control("sampler", "bi_sampler", lambda: st.selectbox(
        "sampler=", list(SAMPLER_LABELS), key="bi_sampler", format_func=SAMPLER_LABELS.get))
    shuffle = control("shuffle", "bi_shuffle", lambda: st.toggle(
        "shuffle", key="bi_shuffle",
        help="Shorthand for a RandomSampler: a new order every epoch. Mutually exclusive with "
             "your own sampler."))
    if sampler in ("random", "replacement", "weighted"):
        num_samples = control("num_samples", "bi_num_samples", lambda: st.number_input(
            "num_samples (0: len(dataset))", 0, MAX_NUM_SAMPLES, key="bi_num_samples",
            help="How many indices the sampler draws per epoch."))
    else:
        num_samples = st.session_state["bi_num_samples"]
    seed = control("seed", "bi_seed", lambda: st.number_input(
        "Seed of generator=", 0, 2**31 - 1, key="bi_seed",
        help="torch.Generator().manual_seed(seed), passed as generator=: the same seed gives "
             "the same batches, every epoch's order still differs."))

    st.subheader("Batches", divider="gray")
    batch_size = control("batch", "bi_batch", lambda: st.number_input(
        "batch_size", 1, MAX_BATCH, key="bi_batch"))
    drop_last = control("drop_last", "bi_drop_last", lambda: st.toggle(
        "drop_last", key="bi_drop_last",
        help="Throw away the last batch when it is smaller than batch_size."))
    batch_sampler = control("batch_sampler", "bi_batch_sampler", lambda: st.selectbox(
        "batch_sampler=", ["none", "bucket"], key="bi_batch_sampler",
        format_func=lambda v: "None (BatchSampler from batch_size)" if v == "none"
        else "BucketBatchSampler (custom, by length)",
        help="A custom batch sampler yields whole index lists; batch_size and drop_last go to it."))
    collate = control("collate", "bi_collate", lambda: st.selectbox(
        "collate_fn=", ["default", "pad"], key="bi_collate",
        format_func=lambda v: "default_collate" if v == "default" else "pad_collate (padding)",
        help="How a list of items becomes one batch."))
    epochs = control("epochs", "bi_epochs", lambda: st.slider("Epochs", 1, MAX_EPOCHS,
                                                              key="bi_epochs"))

    st.subheader("Processes", divider="gray")
    workers = control("workers", "bi_workers", lambda: st.segmented_control(
        "num_workers", [0, 1, 2], key="bi_workers",
        help="0: the main process loads every batch. 1-2: real worker processes started with "
             "the forkserver method, each building whole batches.")) or 0
    worker_init = control("worker_init", "bi_worker_init", lambda: st.toggle(
        "worker_init_fn", key="bi_worker_init", disabled=workers == 0,
        help="worker_init_fn=seed_worker runs once in each worker as it starts and reseeds the "
             "dataset's NumPy generator."))
    prefetch = control("prefetch", "bi_prefetch", lambda: st.slider(
        "prefetch_factor", 1, 8, key="bi_prefetch", disabled=workers == 0,
        help="Batches each worker prepares ahead of time (only with workers)."))
    if workers:
        st.caption(f"At most prefetch_factor × num_workers = {prefetch * workers} batches are "
                   "loaded ahead of the training loop.")
    persistent = control("persistent", "bi_persistent", lambda: st.toggle(
        "persistent_workers", key="bi_persistent", disabled=workers == 0,
        help="Keep the worker processes alive between epochs instead of starting new ones."))
    pin_memory = control("pin_memory", "bi_pin_memory", lambda: st.toggle(
        "pin_memory", key="bi_pin_memory",
        help="Copies each batch into page-locked memory so a later .to('cuda', non_blocking=True) "
             "can overlap with compute. Only useful with a GPU."))

current_settings = BatchSettings(
    n=int(n), batch_size=int(batch_size), shuffle=bool(shuffle), drop_last=bool(drop_last),
    sampler=sampler, seed=int(seed), num_workers=int(workers), epochs=int(epochs),
    dataset=dataset_name, minority_percent=int(minority), num_samples=int(num_samples),
    batch_sampler=batch_sampler, collate=collate, worker_init=bool(worker_init),
    augment=bool(augment), pin_memory=bool(pin_memory), prefetch_factor=int(prefetch),
    persistent_workers=bool(persistent))
publish_link(LINK_SCHEMA, KEY, current_settings)

moons_data = (moons.features, moons.labels) if moons_ready and dataset_name == "moons" else None
data_token = id(moons.features) if moons_data is not None else None


def _compute() -> None:
    """Run the DataLoader once per settings change; the stepper only reads the records."""
    if page.settings == current_settings and page.data_token == data_token and not page.busy:
        return
    page.reset(current_settings, data_token)
    owner = session_id()
    heavy = current_settings.num_workers > 0
    if heavy and not HEAVY_JOBS.acquire(owner):
        page.busy = True
        return
    try:
        page.run = run_loader(current_settings, moons_data,
                              tick=(lambda: HEAVY_JOBS.acquire(owner)) if heavy else None)
    except (ValueError, RuntimeError, TypeError) as exc:
        page.error = explain_loader_error(exc)
    finally:
        if heavy:
            HEAVY_JOBS.release(owner)


_compute()
run = page.run

with main, st.container(key=f"{KEY}_main"):
    if page.busy:
        st.warning(busy_message(), icon=":material/hourglass_top:")
        st.button("Try again", key="bi_retry", icon=":material/refresh:")
    elif page.error is not None:
        error_panel(page.error, key="bi_loader_error")
        fixes = []
        if current_settings.shuffle and (current_settings.sampler != "default"
                                         or current_settings.batch_sampler == "bucket"):
            fixes.append(("Turn shuffle off", {"shuffle": False}))
        if current_settings.batch_sampler == "bucket" and current_settings.sampler != "default":
            fixes.append(("Use no sampler", {"sampler": "default"}))
        if "stack expects" in page.error.message:
            fixes.append(("Use the padding collate_fn", {"collate": "pad"}))
        for position, (label, changes) in enumerate(fixes):
            st.button(label, key=f"bi_fix_{position}", on_click=_fix, kwargs=changes,
                      icon=":material/build:")
    elif run is not None and run.records:
        records = run.records
        page.position = min(max(page.position, 0), len(records) - 1)
        current = records[page.position]

        def _step(delta: int) -> None:
            page.position = min(max(page.position + delta, 0), len(records) - 1)
            st.session_state["bi_jump"] = page.position + 1

        def _jump() -> None:
            page.position = st.session_state["bi_jump"] - 1

        st.plotly_chart(index_grid(run, current), key="bi_index_grid", config=PLOTLY_CONFIG)
        st.caption(" ".join(grid_story(run)) + " Cell numbers are batch numbers; the framed "
                   "cells are the batch below.")
        summaries = run.summaries()
        summary = summaries[current.epoch]
        st.markdown(f"**Epoch {current.epoch}, batch {current.number}** of {summary.batches} "
                    f"in this epoch · {page.position + 1} of {len(records)} batches in the run")
        back, forward = st.columns(2)
        back.button("Back", key="bi_prev", on_click=_step, args=(-1,),
                    disabled=page.position == 0, icon=":material/skip_previous:",
                    width="stretch", shortcut="B", help="The previous batch (key B)")
        forward.button("Next", key="bi_next", on_click=_step, args=(1,),
                       disabled=page.position == len(records) - 1, icon=":material/skip_next:",
                       width="stretch", type="primary", shortcut="N",
                       help="`next(iterator)`: the next batch (key N)")
        if len(records) > 1:
            st.session_state["bi_jump"] = page.position + 1
            st.slider("Jump to batch (in the order the loader yields them)", 1, len(records),
                      key="bi_jump", on_change=_jump)
        built_by = ("the main process (`get_worker_info()` is None)" if current.worker < 0
                    else f"worker process {current.worker} (`get_worker_info().id`)")
        counts = current.class_counts()
        with st.container(border=True, key="bi_current_batch"):
            st.markdown(f"Sample indices: `{list(current.indices)}`  \n"
                        f"Size {current.size} · class 0: {counts[0]}, class 1: {counts[1]} · "
                        f"built by {built_by}")
            st.code(record_line(current.epoch, current.number, current.indices, current.worker),
                    language="text")
            left, right = (st.container(), st.container()) if presenting() \
                else st.columns([1.25, 1])
            with left:
                st.markdown("**The batch's tensors**")
                st.code(tensor_listing(current), language="python")
            with right:
                features = make_dataset(current_settings, moons_data).features \
                    if current_settings.dataset != "sequences" else None
                st.plotly_chart(dataset_figure(run, features, current), key="bi_dataset_fig",
                                config=PLOTLY_CONFIG)
        st.markdown("**Classes in each batch** (the current one framed)")
        st.plotly_chart(class_counts_figure(run, current), key="bi_class_counts",
                        config=PLOTLY_CONFIG)
        if run.truncated:
            st.warning(f"The run stopped early because {run.stopped}, to keep the server "
                       "responsive for everyone; the batches shown are the ones it made.",
                       icon=":material/timer:")
        for note in run.notes:
            st.info(f"PyTorch warned: {note}", icon=":material/info:")
    elif run is not None:
        st.plotly_chart(index_grid(run, None), key="bi_index_grid", config=PLOTLY_CONFIG)
        st.warning(f"This DataLoader yields **no batches**: `len(loader)` is 0. Every epoch has "
                   f"{run.summaries()[0].draws} indices, fewer than `batch_size="
                   f"{current_settings.batch_size}`, and `drop_last=True` drops the only, "
                   "short, batch.", icon=":material/block:")
        st.button("Turn drop_last off", key="bi_fix_0", on_click=_fix,
                  kwargs={"drop_last": False}, icon=":material/build:")

if run is not None and run.records and page.error is None and not page.busy:
    st.header("The pipeline, for this batch", divider="gray")
    st.graphviz_chart(pipeline_dot(run, current, describe_sampler(current_settings,
                                                                  run.dataset_size),
                                   describe_batch_sampler(current_settings),
                                   describe_collate(current_settings)),
                      width="stretch")
    st.caption("The sampler yields indices in the main process; the batch sampler groups them; "
               "`__getitem__` and `collate_fn` run where the batch is built: in the main "
               "process with `num_workers=0`, in a worker process otherwise.")
    before, after = st.columns(2)
    with before:
        st.markdown("**`__getitem__` returns one item per index** (what `collate_fn` receives)")
        st.code(items_listing(make_dataset(current_settings, moons_data), current),
                language="python")
    with after:
        st.markdown(f"**`{'pad_collate' if current_settings.collate == 'pad' else 'default_collate'}"
                    "` makes one batch** (one tensor per key, a new first dimension)")
        st.code(tensor_listing(current), language="python")

    st.header("Epoch by epoch", divider="gray")
    table = pd.DataFrame([{
        "epoch": s.epoch, "batches": s.batches, "samples seen": s.samples_seen,
        "unique samples": s.unique, "repeats": s.repeats, "dropped by drop_last": s.dropped,
        "never drawn": len(s.never_drawn), "class 0": s.class_counts[0],
        "class 1": s.class_counts[1],
        "class 1 share": f"{s.class_counts[1] / max(1, s.samples_seen):.0%}",
        "batch sizes": " ".join(str(b) for b in s.batch_sizes[:20])
        + (" …" if len(s.batch_sizes) > 20 else ""),
    } for s in summaries])
    st.dataframe(table, hide_index=True, key="bi_epochs_table", width="stretch")
    dataset_share = run.labels.count(1) / run.dataset_size
    st.markdown(f"Class 1 is **{dataset_share:.0%}** of the dataset. "
                + ("`WeightedRandomSampler` draws each sample with weight 1 / (size of its "
                   "class), so both classes come up about equally often: the rare class is "
                   "**repeated**, the common one **left out** at random."
                   if current_settings.sampler == "weighted" else
                   "Try `sampler=` WeightedRandomSampler (with shuffle off) to balance the "
                   "classes in every batch." if current_settings.batch_sampler == "none" else ""))

    pitfall_section(page, current_settings, run)

exclusive_section()
cost_section(page)
accumulation_section(run, current_settings, moons)

st.header("pin_memory", divider="gray")
st.markdown(
    "`pin_memory=True` makes the DataLoader copy each batch into *page-locked* host memory. "
    "The GPU can read page-locked memory directly, so `batch.to('cuda', non_blocking=True)` "
    "can overlap the copy with computation. On a machine without an accelerator there is "
    "nothing to overlap with: PyTorch warns and leaves the batch where it is"
    + (f" (this run's batch: `x.is_pinned()` = `{current.tensors['x'].is_pinned()}`)."
       if run is not None and run.records and page.error is None and not page.busy else ".")
)

moons_labels = run.labels if run is not None and current_settings.dataset == "moons" else None
script = loader_script(current_settings, moons_labels)
code_panel(script, filename="batch_iterator.py", key="bi_code",
           caption="Run it: it prints each batch's sample indices, epoch by epoch, the same "
           "batches as this page.")
share_panel(schema=LINK_SCHEMA, settings=current_settings, url_path=KEY, script=script,
            title="Batch iterator", key="bi_share",
            labels={"batch": "batch_size", "workers": "num_workers",
                    "prefetch": "prefetch_factor", "persistent": "persistent_workers",
                    "worker_init": "worker_init_fn", "minority": "class 1 share"})
knowledge_section()
