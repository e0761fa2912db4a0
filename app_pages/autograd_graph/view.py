"""Drawing pieces of the autograd page: what the run said, the step-through, accumulation, exports."""
from __future__ import annotations

import dataclasses
import hashlib
import json

import pandas as pd
import streamlit as st

from app_pages.autograd_graph.drawing import dot_text, drawing, to_dot
from app_pages.autograd_graph.editor import AutogradWork
from app_pages.autograd_graph.stage_plan import (
    DESIGN_VIEWPORT,
    MIN_TEXT_PX,
    SCROLL_TEXT_PX,
    STAGE_BOTTOM_PX,
    STAGE_TOP_PX,
    StagePlan,
    plan_stage,
)
from components import graph_view
from components.accessible_chart import when_open
from components.code_block import code_block
from components.error_panel import error_panel
from components.graph_view import GRAPH_SVG, layout_svg, show_graph
from components.keyboard import skip_to_controls, with_shortcut
from components.plain_text import code_span, md
from workbench.autograd_graph.backward_steps import BackwardTrace, same_gradients
from workbench.autograd_graph.graph import SMALL_TENSOR, GraphModel, Overlay, format_tensor, saved_label
from workbench.autograd_graph.outline import OutlineItem, graph_name, graph_outline, walk_outline
from workbench.autograd_graph.session import SessionResult

# Largest drawing (inches at 72 dpi) before Graphviz shrinks it: the graph column on a laptop,
# the whole page width in presenter mode. Smaller graphs keep their natural size.
GRAPH_INCHES = (7.0, 20.0)
GRAPH_INCHES_WIDE = (12.5, 20.0)
WIDE_GRAPH_NODES = 16
# Presenter mode's stage: the graph's box, and the notice of a graph too big for it.
STAGE_GRAPH_KEY = "autograd_stage_graph"
TOO_BIG_KEY = "autograd_too_big"
# A phone's screen under the graph's box: the title and About above it (about 205 px), the
# graph-as-text line under it, and Back / Next node with the steps' slider (about 130 px).
PHONE_AROUND_GRAPH_PX = 440
COLLAPSED_KEY = "ag_collapsed"
PLAN_MOMENTS = 4            # a walk's stage is planned from its pictures at 0, 1/4, ... 4/4 of it
COLLAPSED_WORDS = (
    "**Collapsed view:** each leaf's box holds its `AccumulateGrad` (and a node such as "
    "`TBackward0` that only passes the leaf on); a chain of nodes that each hand one gradient "
    "to one next node is one box, its nodes listed output side first, ◀ at the one the engine "
    "runs; a constant is written in the box that uses it; a tensor of more than "
    f"{SMALL_TENSOR} elements shows its shape. Saved tensors and the tensors outside the graph "
    "are not drawn. The walk still runs every node.")


def trace_label(trace: BackwardTrace) -> str:
    where = f"line {trace.line}" if trace.line else "called by the page"
    status = "" if trace.finished else " · stopped with an error"
    return f"backward() call {trace.number} on {trace.root_name} ({where}){status}"


def _step_key(signature: str, trace: BackwardTrace) -> str:
    digest = hashlib.sha1(f"{signature}|{trace.number}".encode()).hexdigest()[:12]
    return f"ag_step_{digest}"


def _move(key: str, delta: int, last: int, drawn: dict[str, int]) -> None:
    """Back or Next node, from the step the server last drew (`drawn`, the learner's
    remembered positions), not from the slider's value: the browser sends the slider's value
    with every press, and a press faster than the slider's redraw (N, N on the keyboard) sends
    the step before, which would make two presses one."""
    position = drawn.get(key, st.session_state.get(key, 0))
    st.session_state[key] = max(0, min(last, position + delta))


def _set(key: str, value: int) -> None:
    st.session_state[key] = value


def wrap_labels(keys: tuple[str, ...]) -> None:
    """The labels of these widgets wrap instead of ending in "...": with a presenter's 1.4x text
    and the sidebar open, "Zero the gradients before each call" gets about 230 px."""
    labels = ", ".join(f".st-key-{key} .stMarkdownEllipsis, .st-key-{key} .stMarkdownEllipsis p"
                       for key in keys)
    help_icons = ", ".join(f".st-key-{key} [data-testid=stTooltipIcon]" for key in keys)
    st.html(f"<style>{labels} {{ white-space: normal; overflow: visible; text-overflow: clip; }}\n"
            f"{help_icons} {{ flex-shrink: 0; }}</style>")


def run_problems(result: SessionResult, code: str) -> None:
    """The line that was refused or failed, explained, with the line itself."""
    if result.error is None:
        return
    error = result.error
    if result.error_source == "failed":
        if result.error_line == 0:
            where = "in the page's backward() call"
        else:
            where = f"line {result.error_line}" + (f", column {result.error_col}"
                                                   if result.error_col else "")
        error = dataclasses.replace(error, title=f"{error.title} ({where})")
    error_panel(error, key="ag_error")
    source_lines = code.splitlines()
    if result.error_line and 0 < result.error_line <= len(source_lines):
        code_block(source_with_caret(source_lines[result.error_line - 1], result.error_line,
                                  result.error_col), language="python")


def source_with_caret(text: str, line: int, col: int | None) -> str:
    """The line as `  3 | if w > 0:`, with a `^` under the column when it is known."""
    shown = f"{line:>3} | {text}"
    if col is None or not 1 <= col <= len(text) + 1:
        return shown
    return shown + "\n" + " " * (len(f"{line:>3} | ") + col - 1) + "^"


def decisions_panel(result: SessionResult) -> None:
    """Define-by-run: what each `if` and `while` decided, from the values of this run."""
    decisions = result.decisions
    if not decisions:
        return
    st.markdown("**What the data decided** (define-by-run)")
    st.markdown("\n".join(f"- line {d.line}, {code_span(f'{d.kind} {d.condition}:')} {d.summary()}"
                          for d in decisions))
    st.caption("PyTorch records only the operations that actually run, as they run. The graph "
               "below is the one these values produced: change a value so that a condition comes "
               "out the other way, and PyTorch records a different graph.")


def final_grads_panel(result: SessionResult) -> None:
    """Each leaf's `.grad` after the whole run, as text to select: what `print(w.grad)` shows."""
    if not result.final_grads:
        return
    st.subheader("Final gradients")
    code_block("\n".join(f"{label} = {text}" for label, text in result.final_grads), language="text")
    if result.error is not None and result.error_line:
        when = f"when the program stopped at line {result.error_line}"
    elif result.page_calls:
        calls = "call" if result.page_calls == 1 else f"{result.page_calls} calls"
        when = f"after the program and the page's backward() {calls}"
    else:
        when = "after the program"
    st.caption(f"Each leaf's `.grad` {when}, as `print(w.grad)` writes it (the code panel's script "
               "ends with the same lines).")


def run_output(result: SessionResult) -> None:
    """The interpreter's notes on lines worth a word, and what the program printed."""
    for note in result.interpreter.notes:
        st.info(f"**Line {note.line}: {note.title}.** {note.text}", icon=":material/lightbulb:")
    if result.printed:
        st.markdown("**Printed**")
        code_block("\n".join(p.text for p in result.printed), language="text")


def step_through(traces: list[BackwardTrace], *, signature: str, default_trace: int, scale: float,
                 direction: str, show_saved: bool, work: AutogradWork, collapsed: bool = False,
                 stage: bool = False) -> str:
    """The centrepiece: pick a backward() call, then walk its nodes in the engine's order.

    The chosen call and the position are this learner's work: they come back after a visit to
    another page (Streamlit drops a widget's state when it is not drawn). `stage` draws presenter
    mode's first screen (`_stage`). Returns the DOT text on screen (for the export buttons).
    """
    trace_key = f"ag_trace_{signature}"
    index = default_trace
    if len(traces) > 1:
        if trace_key not in st.session_state:
            st.session_state[trace_key] = min(work.traces.get(signature, default_trace), len(traces) - 1)
        index = st.session_state[trace_key]
    trace = traces[index]
    last = len(trace.steps)
    key = _step_key(signature, trace)
    if key not in st.session_state:
        st.session_state[key] = work.steps.get(key, 0)
    st.session_state[key] = min(st.session_state[key], last)

    upto = st.session_state[key]
    work.remember(work.steps, key, upto)
    if stage:
        # One plan for the whole walk, from pictures spread over it, whatever the step on
        # screen: Next node never rescales the graph or moves the columns.
        def picture_at(at: int):
            return drawing(trace.graph, trace.overlay(at), scale=scale, direction=direction,
                           show_saved=show_saved, collapsed=collapsed, presenter=True)

        plan = plan_stage([picture_at(at) for at in sorted({last * k // PLAN_MOMENTS
                                                            for k in range(PLAN_MOMENTS + 1)})])
        picture = picture_at(upto)
        graph, side, column = _stage(plan)
        with side:
            _pick_trace(traces, trace_key, signature, work)
            _controls(key, upto, last, drawn=work.steps)
        _stage_notice(side, plan, collapsed)
        with side:
            _story(trace, upto, errors_are="below")
            _order_list(trace, upto, stage=True)
        name = graph_name(trace.graph, trace, upto)
        dot = dot_text(picture, title=name)
        with graph:
            show_graph(dot, label=name)
        with column:
            outline(walk_outline(trace, upto))
        current = trace.overlay(upto).current
        _follow(picture.box_of(current) if current else None)
        return dot
    _pick_trace(traces, trace_key, signature, work)
    # Left-to-right drawings and big graphs get the whole page width, with the controls above;
    # otherwise the graph and the controls sit side by side.
    wide = scale > 1.0 or direction == "LR" or len(trace.graph.nodes) > WIDE_GRAPH_NODES
    name = graph_name(trace.graph, trace, upto)
    dot = to_dot(trace.graph, trace.overlay(upto), scale=scale, direction=direction,
                 show_saved=show_saved, max_inches=GRAPH_INCHES_WIDE if wide else GRAPH_INCHES,
                 collapsed=collapsed, title=name)
    if wide:
        _controls(key, upto, last, drawn=work.steps)
        _story(trace, upto)
        show_graph(dot, label=name)
        outline(walk_outline(trace, upto))
        _order_list(trace, upto)
    else:
        picture_column, side = st.columns([3, 2], gap="medium")
        with side:
            _controls(key, upto, last, drawn=work.steps)
            _story(trace, upto)
            _order_list(trace, upto)
        with picture_column:
            show_graph(dot, label=name)
            outline(walk_outline(trace, upto))
    legend(collapsed, show_saved, trace.graph)
    return dot


def _pick_trace(traces: list[BackwardTrace], trace_key: str, signature: str, work: AutogradWork) -> None:
    if len(traces) > 1:
        index = st.selectbox("Step through", range(len(traces)), key=trace_key,
                             format_func=lambda i: trace_label(traces[i]))
        work.remember(work.traces, signature, index)


def _stage(plan: StagePlan):
    """Presenter mode's first screen: the graph's column (sized from the viewport, see
    `_stage_css`) and, beside it, the column for the controls and the story; then the graph's
    column itself, for what goes under the box (the graph as text)."""
    _stage_css(plan)
    graph, side = st.columns([plan.graph_share, 1 - plan.graph_share], gap="small")
    return graph.container(key=STAGE_GRAPH_KEY), side, graph


def _stage_css(plan: StagePlan) -> None:
    """The graph as big as the screen leaves it, never past MAX_TEXT_PX text, and fitted into
    its box both ways, so that no node is cut at the bottom or the right (a box that scrolled
    sideways cut the b leaf's `.grad None` at 1280x720, and its scrollbar the L node). When the
    side along its ranks limits it (its height top to bottom, its width left to right: the side
    the estimate knows well) it is sized by that side, within the box's other side. On a screen
    smaller than `plan.min_viewport` its text would drop under MIN_TEXT_PX: there it is drawn
    at its own size, zoomed to exactly SCROLL_TEXT_PX text, in a box as tall as the screen
    allows, which scrolls (the keyboard reaches it: components/accessible_theme.py); the notice
    that says so shows on those screens only. On a phone (at most 640 px wide, where the side
    column goes under the graph) that box leaves PHONE_AROUND_GRAPH_PX of the screen to the
    title above it and to Back / Next node under it."""
    leave = STAGE_TOP_PX + STAGE_BOTTOM_PX
    graph = f".st-key-{STAGE_GRAPH_KEY}"
    svg = f"{graph} {GRAPH_SVG}"
    tall = f"min({plan.max_height_px}px, max(240px, calc(100vh - {leave}px)))"
    if plan.along_bound and plan.direction == "TB":
        fit = f"{svg} {{ height: {tall}; width: auto; max-width: 100%; }}"
    elif plan.along_bound:
        fit = (f"{svg} {{ width: min({plan.max_width_px}px, 100%); height: auto; max-width: 100%; "
               f"max-height: calc(100vh - {leave}px); }}")
    else:
        fit = f"{svg} {{ width: 100%; height: auto; max-width: {plan.max_width_px}px; max-height: {tall}; }}"
    width, height = plan.min_viewport
    small = f"(max-width: {width - 0.02:.2f}px), (max-height: {height - 0.02:.2f}px)"
    large = f"(min-width: {width}px) and (min-height: {height}px)"
    # Streamlit's graphviz element sets every text inside it to one small size (0.6rem), not the
    # size Graphviz laid the boxes out for: on the stage the text gets its own size back, so
    # that it scales with the drawing. The attribute rule for the one size a presenter's drawing
    # uses, `revert-layer` for any other.
    own_size = f'text[font-size="{plan.font_pt:.2f}"] {{ font-size: {plan.font_pt:.2f}px; }}'
    st.html(f"""<style>
{svg} text {{ font-size: revert-layer; }}
{svg} {own_size}
{fit}
@media {small} {{
  {graph} {{ height: calc(100vh - {leave}px); overflow: auto; }}
  {svg} {{ width: auto; height: auto; max-width: none; max-height: none; zoom: {plan.scroll_zoom:.4f}; }}
}}
@media (max-width: 640px) {{
  {graph} {{ height: max(200px, calc(100vh - {PHONE_AROUND_GRAPH_PX}px));
    max-height: max(200px, calc(100vh - {PHONE_AROUND_GRAPH_PX}px)); overflow: auto; }}
}}
@media {large} {{ .st-key-{TOO_BIG_KEY} {{ display: none; }} }}
</style>""")


def _follow(box_key: str | None) -> None:
    """When the graph scrolls in its box, bring the box of the node the engine runs to the
    middle of it: Next node and the node it ran stay on screen together. The browser renders
    the graph after this script starts, so it looks for the node on each frame for a while."""
    if box_key is None:
        return
    st.html(f"""<script>
(() => {{
  const wanted = {json.dumps(box_key)}, started = performance.now();
  const centre = () => {{
    const box = document.querySelector(".st-key-{STAGE_GRAPH_KEY}");
    const node = box && [...box.querySelectorAll("g.node")]
      .find(g => g.querySelector("title")?.textContent === wanted);
    if (!node) {{
      if (performance.now() - started < 4000) requestAnimationFrame(centre);
      return;
    }}
    const n = node.getBoundingClientRect(), b = box.getBoundingClientRect();
    box.scrollLeft += n.left + n.width / 2 - (b.left + b.width / 2);
    box.scrollTop += n.top + n.height / 2 - (b.top + b.height / 2);
  }};
  centre();
}})();
</script>""", unsafe_allow_javascript=True)


def _set_collapsed(value: bool) -> None:
    st.session_state[COLLAPSED_KEY] = value


def _stage_notice(side, plan: StagePlan, collapsed: bool) -> None:
    """A graph too big for the design stage says so, and offers the collapsed view (or, in it,
    the full view back)."""
    design = f"{DESIGN_VIEWPORT[0]}×{DESIGN_VIEWPORT[1]}"
    if not plan.fits_design_stage:
        with side.container(key=TOO_BIG_KEY):
            what = "Even collapsed, this graph" if collapsed else "This graph"
            shrunk = int(min(plan.design_text_px_at_worst, MIN_TEXT_PX - 1))
            st.warning(f"**{what} is too big for a {design} screen:** fitted to it, its text could "
                       f"shrink to about {shrunk} px. It keeps {SCROLL_TEXT_PX:.0f} px text and "
                       "scrolls instead" + ("." if collapsed else "; the collapsed view is smaller."),
                       icon=":material/zoom_out_map:")
    with side:
        if collapsed:
            st.button("Full view", icon=":material/unfold_more:", key="ag_stage_full",
                      on_click=_set_collapsed, args=(False,),
                      help="Every node of the graph in its own box, with saved tensors if they are on.")
        elif not plan.fits_design_stage:
            st.button("Collapsed view", icon=":material/unfold_less:", key="ag_stage_collapse",
                      type="primary", on_click=_set_collapsed, args=(True,), help=COLLAPSED_WORDS)


def _controls(key: str, upto: int, last: int,
              drawn: dict[str, int]) -> None:
    """Back, Next node, to the end, and a slider over the engine's steps; the page's skip link
    goes to Next node (Back once at the end)."""
    skip_to_controls(f"{key}_next", f"{key}_back")
    # One fixed key around them (the buttons' own keys name the backward call): the tool's main
    # control in workbench/tools.py, which the layout tests look for.
    with st.container(key="ag_backward_controls"):
        _control_buttons(key, upto, last, drawn)


def _control_buttons(key: str, upto: int, last: int,
                     drawn: dict[str, int]) -> None:
    # One row on a phone too: stacked columns took 236 px of a phone's 844, and columns that
    # may not wrap keep a minimum width that cut the last button at 1280x720.
    row = st.container(horizontal=True, gap="small", vertical_alignment="bottom", wrap=False)
    row.button("", icon=":material/skip_previous:", key=f"{key}_back", width="content",
               help=with_shortcut("Back one node", "B"), shortcut="B",
               on_click=_move, args=(key, -1, last, drawn), disabled=upto == 0)
    row.button("Next node", icon=":material/skip_next:", key=f"{key}_next", type="primary",
               width="stretch", on_click=_move, args=(key, 1, last, drawn), disabled=upto >= last,
               help=with_shortcut("Run the next node of the backward graph", "N"), shortcut="N")
    row.button("", icon=":material/fast_forward:", key=f"{key}_all", width="content",
               help="Run to the end", on_click=_set, args=(key, last), disabled=upto >= last)
    if last:
        st.slider("Nodes run by the engine", 0, last, key=key,
                  help="0: only the starting gradient. Each step runs one node of the backward "
                       "graph, in the order PyTorch's engine ran it.")


def _order_list(trace: BackwardTrace, upto: int, stage: bool = False) -> None:
    """The engine's order as a numbered list, like a debugger's trace; the current node marked."""
    if not trace.steps:
        return
    rows = []
    for step in trace.steps:
        label = step.name if step.leaf_name is None else f"AccumulateGrad → {step.leaf_name}.grad"
        made = f" ({step.output_name})" if step.output_name else ""
        number = f"`{step.index:>2}`"
        if step.index == upto:
            rows.append(f"{number} :orange-background[**{label}{made}**] ◀")
        elif step.index < upto:
            rows.append(f"{number} :orange[{label}{made}]")
        else:
            rows.append(f"{number} :gray[{label}{made}]")
    # Presenter mode's text is 1.4x: so is the list's box.
    grow = 1.4 if stage else 1.0
    height = int(min(40 + 30 * len(rows), 330) * grow)
    with st.container(height=height, border=False, key="autograd_graph_order"):
        st.markdown("**Order the engine ran the nodes**\n\n" + "  \n".join(rows))


OUTLINE_KEY = "ag_outline"


def outline(items: list[OutlineItem]) -> None:
    """The graph as text, under the drawing: a closed expander (built only when opened) with a
    list of the nodes, in the engine's order once backward() has run, each with its tensor's
    value and the gradients PyTorch computed, as far as the step-through has got
    (workbench/autograd_graph/outline.py). What a screen reader reads instead of the boxes."""
    box = when_open("Graph as text: each node's value and gradient", key=OUTLINE_KEY,
                    icon=":material/list:")
    if box is None:
        return
    with box:
        st.markdown("\n".join(f"- **{md(item.text())}**" if item.state == "now"
                              else f"- {md(item.text())}" for item in items))


def _story(trace: BackwardTrace, upto: int, errors_are: str = "above") -> None:
    with st.container(border=True, key="autograd_graph_story"):
        if not trace.recorded:
            st.markdown(":material/info: This call ran, but was not recorded step by step: the page "
                        "keeps a limited number of gradient copies per run. Pick an earlier call.")
            return
        if not trace.steps and trace.error is not None:
            st.markdown(f":material/error: **`{trace.root_name}.backward()` stopped before running "
                        f"any node**, with PyTorch's error explained {errors_are}: "
                        f"{md(str(trace.error).splitlines()[0][:160])}")
            return
        if upto == 0:
            seed = "nothing" if trace.seed is None else format_tensor(trace.seed)
            st.markdown(
                f":material/play_circle: **Start.** `{trace.root_name}.backward()` begins with the "
                f"gradient of `{trace.root_name}` with respect to itself: **{seed}**"
                + (" (created implicitly because the output is a scalar)." if trace.seed is not None
                   else ".") + " Press **Next node** to let the engine run its first node.")
        else:
            step = trace.steps[upto - 1]
            st.markdown(f":material/arrow_back: **Step {upto} of {len(trace.steps)}.** {step.story()}")
        if upto == len(trace.steps) and trace.steps:
            if trace.finished:
                done = ", ".join(f"`{name}.grad` = **{format_tensor(grad)}**"
                                 for name, grad in trace.leaf_grads.items())
                st.markdown(f":material/check_circle: **Done.** {done or 'No leaf received a gradient.'}")
            else:
                st.markdown(f":material/error: **The engine stopped here** with PyTorch's error "
                            f"(explained {errors_are}): {md(str(trace.error).splitlines()[0][:160])}")


def legend(collapsed: bool = False, show_saved: bool = False, model: GraphModel | None = None) -> None:
    st.caption(
        "Arrows point the way the forward pass computed. During backward, gradients travel against "
        "them (orange, with the value that flowed). Blue boxes: leaves that require grad; grey "
        "boxes: PyTorch's backward nodes (`grad_fn`), with the value they made; green boxes: "
        "`AccumulateGrad`, which adds into a leaf's `.grad`; dashed grey: tensors outside the graph; "
        "blue *saved* lines: what a node kept for its backward formula. The *grad* on a grey node "
        "is what the engine passed through it; PyTorch keeps a gradient in `.grad` only for leaves "
        "(and for tensors that called `retain_grad()`).")
    if collapsed:
        st.caption(COLLAPSED_WORDS)
    elif show_saved and model is not None:
        footnote = saved_footnote(model)
        if footnote:
            st.caption(footnote)


def saved_footnote(model: GraphModel) -> str:
    """Which of PyTorch's own attributes each *saved* name of this graph stands for."""
    fields = sorted({f for node in model.nodes for f in node.saved_from})
    if not fields:
        return ""
    pairs = ", ".join(f"*{saved_label(f)[0]}* is `grad_fn.{f}`" for f in fields)
    return ("*Saved* names are those of PyTorch's derivative formulas: `self` is the tensor the "
            "operation was called on, `other` its second input, `result` its output; `self.shape` "
            "means only the shape was kept. PyTorch keeps them on the node: " + pairs
            + ". Hover a box to see its own.")


def static_graph(model: GraphModel, *, scale: float, direction: str, show_saved: bool = False,
                 collapsed: bool = False, stage: bool = False, note: str = "") -> str:
    """The graph with no backward() to walk through (`note` says why, beside it on the stage)."""
    if stage:
        picture = drawing(model, Overlay(), scale=scale, direction=direction, show_saved=show_saved,
                          collapsed=collapsed, presenter=True)
        plan = plan_stage([picture])
        graph, side, column = _stage(plan)
        if note:
            side.info(note, icon=":material/info:")
        _stage_notice(side, plan, collapsed)
        dot = dot_text(picture, title=graph_name(model))
        with graph:
            show_graph(dot, label=graph_name(model))
        with column:
            outline(graph_outline(model))
        return dot
    if note:
        st.info(note, icon=":material/info:")
    dot = to_dot(model, Overlay(), scale=scale, direction=direction, show_saved=show_saved,
                 max_inches=GRAPH_INCHES_WIDE, collapsed=collapsed, title=graph_name(model))
    show_graph(dot, label=graph_name(model))
    outline(graph_outline(model))
    legend(collapsed, show_saved, model)
    return dot


def accumulation_panel(traces: list[BackwardTrace], *, zero: bool, retain: bool, page_calls: int) -> None:
    """Every leaf's .grad after each backward() call of the run, the program's and the page's."""
    history = [t for t in traces if t.leaf_grads]
    if not history:
        return
    rows = [accumulation_row(t) for t in history]
    st.dataframe(pd.DataFrame(rows).astype(str), hide_index=True, key="ag_accumulation")
    ran = [t for t in history if t.finished]
    if zero and page_calls and len(ran) > 1:
        st.markdown(zeroed_calls_words(ran))
    elif len(ran) > 1:
        st.markdown(
            "`backward()` **adds** into `.grad`; it never overwrites it. Calling it again on the same "
            "graph puts the same gradient on top of what is there. PyTorch does this on purpose: a "
            "leaf used in several places, several losses, or several small batches (gradient "
            "accumulation) must sum. The cure in a training loop is to zero the gradients before "
            "each backward: "
            "`w.grad.zero_()`, `w.grad = None` or `optimizer.zero_grad()`.")
    for trace in history:
        if not trace.finished:
            st.markdown(f"Call {trace.number} **failed**: {failed_call_words(trace)}")
    if page_calls and not retain:
        st.caption(retain_graph_note([t for t in history if t.line == 0]))


def zeroed_calls_words(ran: list[BackwardTrace]) -> str:
    """With *zero the gradients* on: "the same gradient" only if the recorded calls left it."""
    start = "Each call starts from `.grad = None` (*zero the gradients* is on), so "
    if same_gradients(ran):
        return (start + "every call gives the same gradient: this is what `optimizer.zero_grad()` "
                "does in a training loop.")
    return (start + "no call adds to another's gradient: each row is that call's own gradient, "
            "and here they are not all the same.")


SECOND_TIME = "backward through the graph a second time"    # PyTorch's error for a freed graph


def retain_graph_note(page_traces: list[BackwardTrace]) -> str:
    """What the page's calls without `retain_graph=True` showed, from how they ended: a graph
    that saved tensors refuses a second call; one that saved none (`w + b`) does not."""
    later = page_traces[1:]
    refused = [t for t in later if t.error is not None and SECOND_TIME in str(t.error)]
    if refused:
        return (f"Call {refused[0].number} was refused: without `retain_graph=True` the first call "
                "freed the tensors this graph had saved for backward, and a second call needs them.")
    if later and all(t.finished for t in later):
        return (f"All {len(page_traces)} calls ran without `retain_graph=True`: this graph saved no "
                "tensors for backward (`+` and `sum` need none), so the first call freed nothing "
                "that the next one needed. A graph that saves tensors, such as `w * w`, refuses a "
                "second call.")
    return ("Without `retain_graph=True` the first call frees the tensors the graph saved for "
            "backward: a second call through a graph that saved any is refused.")


def accumulation_row(trace: BackwardTrace) -> dict[str, object]:
    """One row of the table: a failed call says so, and each `.grad` it left alone says so."""
    changed = trace.changed
    if trace.finished:
        outcome = "ran"
    elif not changed:
        outcome = "failed: changed nothing"
    else:
        outcome = "failed after changing " + ", ".join(f"{name}.grad" for name in changed)
    row: dict[str, object] = {"backward() call": trace.number, "on": trace.root_name,
                              "called by": f"line {trace.line}" if trace.line else "the page",
                              "result": outcome}
    for name, grad in trace.leaf_grads.items():
        text = format_tensor(grad)
        row[f"{name}.grad"] = text if trace.finished or name in changed else f"{text} (unchanged)"
    return row


def failed_call_words(trace: BackwardTrace) -> str:
    changed = trace.changed
    if not changed:
        return ("PyTorch raised its error (explained above) before adding anything, so every "
                "`.grad` in its row is what it was before the call. Nothing was added.")
    kept = [name for name in trace.leaf_grads if name not in changed]
    words = ("PyTorch raised its error (explained above) after the engine had already added into "
             + ", ".join(f"`{name}.grad`" for name in changed))
    if kept:
        words += "; " + ", ".join(f"`{name}.grad`" for name in kept) + (
            " kept its value" if len(kept) == 1 else " kept their values")
    return words + "."


def export_buttons(dot: str, key: str) -> None:
    columns = st.columns([1, 1, 2], vertical_alignment="center")
    columns[0].download_button("Graph as DOT", dot.encode(), file_name="autograd_graph.dot",
                               mime="text/vnd.graphviz", key=f"{key}_dot", icon=":material/download:")
    # The drawing the page shows when the server lays it out (bounded in time and size there).
    svg = layout_svg(dot)
    if svg:
        columns[1].download_button("Graph as SVG", svg.encode(), file_name="autograd_graph.svg",
                                   mime="image/svg+xml", key=f"{key}_svg", icon=":material/download:")
    elif graph_view.dot_program() is None:
        columns[2].caption("SVG export needs the Graphviz `dot` program on the server; the DOT file "
                           "opens in any Graphviz viewer.")
    else:
        columns[2].caption("This graph is too big to lay out on the server; the DOT file opens in "
                           "any Graphviz viewer.")
