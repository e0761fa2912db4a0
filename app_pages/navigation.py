"""The pages of the workbench, in the order of the sidebar: the tools' pages come from their
records (workbench/tools.py); home, the lessons and the class are written here.

`main_key` is the key of the container holding the page's main picture; the end-to-end tests
look for `.st-key-<main_key>` on every page.
"""
from __future__ import annotations

from dataclasses import dataclass

from workbench.tools import TOOLS as TOOL_RECORDS
from workbench.tools import Tool


@dataclass(frozen=True)
class Page:
    title: str
    script: str
    url_path: str
    icon: str
    blurb: str
    main_key: str

    @classmethod
    def of(cls, tool: Tool) -> Page:
        return cls(tool.title, tool.script, tool.url_path, tool.icon, tool.blurb, tool.main_key)


HOME = Page("Home", "app_pages/home/page.py", "", ":material/home:",
            "What the workbench teaches, and whether PyTorch sees your hardware.", "home_main")

LESSONS_PAGE = Page("Guided lessons", "app_pages/lessons/page.py", "lessons", ":material/school:",
                    "Step-by-step lessons through the tools, each step a link and a question.",
                    "lessons_main")

# The URL path stays /class (on teachers' slides); the folder is the class's one name.
CLASS_PAGE = Page("Class", "app_pages/classroom/page.py", "class", ":material/groups:",
                  "Start a class: a code to join, the live pulse of the class's answers.",
                  "class_main")

TOOLS: tuple[Page, ...] = tuple(Page.of(tool) for tool in TOOL_RECORDS)


def sections() -> dict[str, list[Page]]:
    """The navigation's sections, in the sidebar's order."""
    return {"Start": [HOME], "Tools": list(TOOLS), "Classroom": [LESSONS_PAGE, CLASS_PAGE]}


def all_pages() -> list[Page]:
    return [page for pages in sections().values() for page in pages]
