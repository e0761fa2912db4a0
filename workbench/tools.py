"""The workbench's tools, one record each: every list of tools in the app, the docs, the tests and
the benchmarks is read from `TOOLS`.

A tool has one name, and that name is its package (`workbench/<name>/`), its page folder
(`app_pages/<name>/`), its URL path (`/<name>`, on teachers' slides: never renamed), its tests'
folders (`tests/unit/<name>/`, `tests/app/<name>/`) and the prefix of its end-to-end tests.
Adding a tool is two folders and one record here: docs/adding-a-tool.md, kept true by
tests/unit/test_tools.py, which fails on a tool that is half added.

The element keys name what the layout tests look for on every page: `main_key` is the container
of the page's main picture, `figure_key` the tool's key figure, `control_key` its main control
(each is the `key=` of a Streamlit element, found in the browser as `.st-key-<key>`).
"""
from __future__ import annotations

from dataclasses import dataclass

from workbench.autograd_graph.settings import TABLE as AUTOGRAD_GRAPH_TABLE
from workbench.batch_iterator.settings import TABLE as BATCH_ITERATOR_TABLE
from workbench.common.links import LinkSchema
from workbench.moons_trainer.compare_settings import TABLE as MOONS_COMPARE_TABLE
from workbench.moons_trainer.settings import TABLE as MOONS_TRAINER_TABLE
from workbench.tensor_inspector.settings import TABLE as TENSOR_INSPECTOR_TABLE


@dataclass(frozen=True)
class Tool:
    name: str                  # the one name: package, page folder, URL path, test folders
    title: str
    icon: str                  # a Material icon, as Streamlit writes it
    blurb: str                 # one or two sentences: the home page's card, the lessons' links
    settings: LinkSchema       # its one settings table: widgets, lesson links, share panel, docs
    widget_prefix: str         # its widgets' session_state keys: `<prefix><link name>`
    figure_key: str
    control_key: str
    # More link tables that the same page reads (the moons trainer's comparison, `vs=`), named
    # as their generated table in docs/lesson-links.md.
    extra_links: tuple[tuple[str, LinkSchema], ...] = ()

    @property
    def package(self) -> str:
        return f"workbench.{self.name}"

    @property
    def page_folder(self) -> str:
        return f"app_pages/{self.name}"

    @property
    def script(self) -> str:
        return f"{self.page_folder}/page.py"

    @property
    def url_path(self) -> str:
        return self.name

    @property
    def main_key(self) -> str:
        return f"{self.name}_main"

    @property
    def link_tables(self) -> dict[str, LinkSchema]:
        """Every link table of the page, by its name in docs/lesson-links.md."""
        return {self.name: self.settings, **dict(self.extra_links)}


TENSOR_INSPECTOR = Tool(
    "tensor_inspector", "Tensor inspector", ":material/grid_on:",
    "Shape, dtype, strides and storage of a rank 0-5 tensor, and what view, reshape, transpose, "
    "permute and friends really do to memory.",
    TENSOR_INSPECTOR_TABLE, widget_prefix="ti_", figure_key="ti_grid", control_key="ti_ops")

AUTOGRAD_GRAPH = Tool(
    "autograd_graph", "Autograd graph", ":material/account_tree:",
    "The graph PyTorch records as you compute, with values and gradients, and the backward pass "
    "stepped node by node.",
    AUTOGRAD_GRAPH_TABLE, widget_prefix="ag_", figure_key="autograd_stage_graph",
    control_key="ag_backward_controls")

MOONS_TRAINER = Tool(
    "moons_trainer", "Moons trainer", ":material/model_training:",
    "Train a real MLP on two moons and watch the decision boundary form; save and reload its "
    "state_dict.",
    MOONS_TRAINER_TABLE, widget_prefix="mt_", figure_key="mt_live", control_key="mt_play",
    extra_links=(("moons_compare", MOONS_COMPARE_TABLE),))

BATCH_ITERATOR = Tool(
    "batch_iterator", "Batch iterator", ":material/view_module:",
    "Dataset, Sampler, BatchSampler, collate and DataLoader, one batch at a time.",
    BATCH_ITERATOR_TABLE, widget_prefix="bi_", figure_key="bi_index_grid", control_key="bi_next")

# The sidebar's and the home page's order.
TOOLS: tuple[Tool, ...] = (TENSOR_INSPECTOR, AUTOGRAD_GRAPH, MOONS_TRAINER, BATCH_ITERATOR)
BY_NAME: dict[str, Tool] = {tool.name: tool for tool in TOOLS}
