"""The pipeline's six stages as one HTML block: an ordered list of cards, three to a row.

One element, not six bordered containers with a markdown element each and arrows between them:
Next redraws the pipeline on every step, and Streamlit's per-element cost in the browser (about
25 elements here) was a good part of a step. An ordered list is also what a screen reader should
announce: "list, 6 items", in the order the data flows.
"""
from __future__ import annotations

import html

from workbench.common.palette import GREY_550

PIPELINE_CLASS = "wb-pipeline"


def _css() -> str:
    return f"""<style>
ol.{PIPELINE_CLASS} {{ list-style: none; margin: 0; padding: 0; display: grid;
  grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 0.75rem 2rem;
  counter-reset: stage; }}
ol.{PIPELINE_CLASS} > li {{ position: relative; margin: 0; padding: 0.6rem 0.8rem;
  border: 1px solid {GREY_550}; border-radius: 0.5rem; line-height: 1.45;
  counter-increment: stage; overflow-wrap: anywhere; }}
ol.{PIPELINE_CLASS} > li::before {{ content: counter(stage) ". "; font-weight: 700; }}
/* An arrow in the gap after every card but a row's last: the data flows left to right. */
ol.{PIPELINE_CLASS} > li:not(:nth-child(3n))::after {{ content: "→"; position: absolute;
  right: -1.55rem; top: 50%; transform: translateY(-50%); font-size: 1.2em; }}
ol.{PIPELINE_CLASS} .stage {{ font-family: "Source Code Pro", monospace; font-weight: 700; }}
</style>"""


def pipeline_html(stages: list[tuple[str, str, str]]) -> str:
    """`stages` as (key, title, body with lines separated by newlines), escaped, in one `<ol>`."""
    cards = "".join(
        f'<li data-stage="{html.escape(key)}"><span class="stage">{html.escape(title)}</span>'
        + "".join(f"<br>{html.escape(line)}" for line in body.split("\n")) + "</li>"
        for key, title, body in stages)
    return f'{_css()}<ol class="{PIPELINE_CLASS}" aria-label="The DataLoader pipeline, ' \
           f'stage by stage">{cards}</ol>'
