"""The pages of the workbench, in one table that the router, the home page and the lessons read.

`main_key` is the key of the container holding the page's main picture; the end-to-end tests
look for `.st-key-<main_key>` on every page.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tool:
    title: str
    script: str
    url_path: str
    icon: str
    blurb: str
    main_key: str


HOME = Tool("Home", "app_pages/home/page.py", "", ":material/home:",
            "What the workbench teaches, and whether PyTorch sees your hardware.", "home_main")

LESSONS_PAGE = Tool("Guided lessons", "app_pages/lessons/page.py", "lessons", ":material/school:",
                    "Step-by-step lessons through the tools, each step a link and a question.",
                    "lessons_main")

CLASS_PAGE = Tool("Class", "app_pages/classroom/page.py", "class", ":material/groups:",
                  "Start a class: a code to join, the live pulse of the class's answers.",
                  "class_main")

TOOLS: tuple[Tool, ...] = (
    Tool("Tensor inspector", "app_pages/tensor_inspector/page.py", "tensor_inspector", ":material/grid_on:",
         "Shape, dtype, strides and storage of a rank 0-5 tensor, and what view, reshape, "
         "transpose, permute and friends really do to memory.", "tensor_inspector_main"),
    Tool("Autograd graph", "app_pages/autograd_graph/page.py", "autograd_graph", ":material/account_tree:",
         "The graph PyTorch records as you compute, with values and gradients, and the backward "
         "pass stepped node by node.", "autograd_graph_main"),
    Tool("Moons trainer", "app_pages/moons_trainer/page.py", "moons_trainer", ":material/model_training:",
         "Train a real MLP on two moons and watch the decision boundary form; save and reload "
         "its state_dict.", "moons_trainer_main"),
    Tool("Batch iterator", "app_pages/batch_iterator/page.py", "batch_iterator", ":material/view_module:",
         "Dataset, Sampler, BatchSampler, collate and DataLoader, one batch at a time.",
         "batch_iterator_main"),
)


def sections() -> dict[str, list[Tool]]:
    """The navigation's sections, in the sidebar's order."""
    return {"Start": [HOME], "Tools": list(TOOLS), "Classroom": [LESSONS_PAGE, CLASS_PAGE]}


def all_pages() -> list[Tool]:
    return [page for pages in sections().values() for page in pages]
