"""Batch iterator: Dataset, Sampler, BatchSampler, collate_fn and DataLoader, batch by batch.

Settings (the table in workbench/batch_iterator/settings.py, drawn by SettingsForm) -> one real
DataLoader run per settings change (state.py) -> the stepper and the lesson panels.
"""
from __future__ import annotations

import streamlit as st

from app_pages.batch_iterator import panels, stepper
from app_pages.batch_iterator.state import BatchPageState, Moons
from components.classroom import share_panel
from components.code_panel import code_panel
from components.stage import page_header
from components.keyboard import skip_to_controls
from components.knowledge_check import knowledge_check
from components.lesson_link import fixed_settings_note, link_settings, publish_link
from components.settings_form import SettingsForm
from components.state import fragment_rerun, learner_state, shared_model
from workbench.batch_iterator.checks import BATCH_ITERATOR_COUNT
from workbench.batch_iterator.codegen import loader_script
from workbench.batch_iterator.settings import DATASETS, TABLE, BatchSettings

KEY = "batch_iterator"

fixed_slot = page_header("Batch iterator",
    "A real `torch.utils.data.DataLoader` runs on this server with your settings, and every "
    "batch it yields is shown: which samples it drew, in which order, built by which process. "
    "Change a setting and see why the **second epoch differs from the first**, **where "
    "`drop_last` puts the short batch**, and **how `WeightedRandomSampler` balances the classes**.",
    figure_first=True
)

# %% Settings: from the link (or the learner's own, coming back by the sidebar) and the widgets
linked, fresh = link_settings(TABLE, KEY)
form = SettingsForm(TABLE, linked, fresh, prefix="bi_")
page = learner_state(KEY, BatchPageState)
moons = shared_model()
datasets = [name for name in DATASETS if name != "moons" or moons.ready]
if st.session_state[form.key("dataset")] not in datasets:
    st.warning("`dataset=moons` needs a trained model: train one on the Moons trainer page "
               "first. The points dataset is used meanwhile.", icon=":material/info:")
    st.session_state[form.key("dataset")] = "points"

def settings_panel(first, second) -> None:
    """The settings, in four groups: Dataset and Order in `first`, Batches and Processes in
    `second`."""
    with first:
        st.subheader("Dataset", divider="gray")
        if form.value("dataset", options=datasets) == "moons":
            st.caption(f"{moons.description or 'Your moons training split'}: labels and scaled "
                       "features from the Moons trainer.")
        else:
            form.draw("n", "minority")
        form.draw("augment")

        st.subheader("Order", divider="gray")
        sampler = form.value("sampler")
        form.draw("shuffle")
        if sampler in ("random", "replacement", "weighted"):
            form.draw("num_samples")
        form.draw("seed")

    with second:
        st.subheader("Batches", divider="gray")
        form.draw("batch", "drop_last", "batch_sampler", "collate", "epochs")

        st.subheader("Processes", divider="gray")
        workers = form.value("workers")
        form.draw("worker_init", disabled=workers == 0)
        prefetch = form.value("prefetch", disabled=workers == 0)
        if workers:
            st.caption(f"At most prefetch_factor × num_workers = {prefetch * workers} batches "
                       "are loaded ahead of the training loop.")
        form.draw("persistent", disabled=workers == 0)
        form.draw("pin_memory")


def compute() -> tuple[BatchSettings, Moons | None]:
    """The settings the widgets describe, published to the link, and one DataLoader run per
    settings change (Next and Back only move the position)."""
    settings = form.settings()
    publish_link(TABLE, KEY, settings)
    moons_data = (moons.features, moons.labels) if settings.dataset == "moons" and moons.ready \
        else None
    page.update(settings, moons_data, id(moons.features) if moons_data is not None else None)
    return settings, moons_data


@st.fragment
def batch_view() -> None:
    """The stage (the index grid, Back/Next, the current batch) and this batch's pipeline: what
    a step changes. Next, Back and the slider rerun only this fragment, not the page
    with its figures (the epochs, the costs); a change that runs the DataLoader again (a
    setting drawn in here in presenter mode, a fix button, Run again) redraws the whole page."""
    form.reread()
    # The first screen goes to the stage (the grid, Back/Next and the batch's indices), on a
    # laptop, a phone and a projector alike; the settings fold away just below it, with the
    # same widget keys, and the rest of the current batch follows them. The containers are
    # placed now and filled in the order the settings need: settings first.
    stage = st.container(key=f"{KEY}_main")
    with st.expander("Settings: dataset, order, batches, processes", icon=":material/tune:",
                     key="bi_settings_panel"):
        settings_panel(*st.columns(2, gap="large"))
    details = st.container()
    settings, moons_data = compute()
    if page.loader_runs != page.drawn_for_run and fragment_rerun():
        st.rerun(scope="app")           # a new DataLoader run: every section below shows it
    with stage:
        stepper.draw(page, form, settings, moons_data, details)
    if page.run is not None and page.current is not None:
        panels.pipeline_section(page.run, page.current, settings, moons_data)


# %% Settings, compute and the batch view (the settings are in the view, under its stage)
skip_to_controls("bi_next", "bi_prev")         # the stepper's buttons (stepper.py)
batch_view()
settings, moons_data = compute()
run = page.run
fixed_settings_note(fixed_slot, TABLE, settings)

# %% Draw what a step does not change, in lazy tabs: only the open one runs and is sent, so a new
# tab's first screen waits for none of the others (a batching measurement, the pitfall's tables,
# the accumulation's gradients); switching tabs reruns the page. "Epoch by epoch" opens first: it
# is where the page's three questions (the second epoch, drop_last, the sampler) are answered.
script = loader_script(settings, run.labels if run is not None and settings.dataset == "moons"
                       else None)


def about_the_run(draw_section):
    """A section about this DataLoader run's batches; without a run (the settings made the
    DataLoader fail) it says where the reason is instead of staying empty."""
    def draw() -> None:
        if run is None:
            st.info("No batches to show: the DataLoader did not run, for the reason shown above.",
                    icon=":material/info:")
        else:
            draw_section(run)
    return draw


SECTIONS = {
    "Epoch by epoch": about_the_run(lambda run: panels.epochs_section(run, settings)),
    "Pitfalls": about_the_run(lambda run: panels.pitfall_section(page, settings, run)),
    "Exclusive options": panels.exclusive_section,
    "What batching costs": lambda: panels.cost_section(page),
    "Gradient accumulation": lambda: panels.accumulation_section(run, settings, moons),
    "pin_memory": lambda: panels.pin_memory_section(run),
    "Code": lambda: code_panel(script, filename="batch_iterator.py", key="bi_code", expanded=True,
                               caption="Run it: it prints each batch's sample indices, epoch by "
                               "epoch, the same batches as this page."),
}
for tab, draw_section in zip(st.tabs(list(SECTIONS), key="bi_tabs", on_change="rerun"),
                             SECTIONS.values(), strict=True):
    if tab.open:
        with tab:
            draw_section()
share_panel(schema=TABLE, settings=settings, url_path=KEY, script=script,
            title="Batch iterator", key="bi_share", labels=TABLE.labels())
knowledge_check(BATCH_ITERATOR_COUNT)
page.drawn_for_run = page.loader_runs
