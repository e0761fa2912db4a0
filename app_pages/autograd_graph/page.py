"""Autograd graph: type a small PyTorch program, see the graph it records, step through backward."""
import hashlib

import streamlit as st

from app_pages.autograd_graph.view import (accumulation_panel, export_buttons, language_help,
                                            refusal_panel, static_graph, step_through)
from components.classroom import share_panel, visible
from components.code_panel import code_panel
from components.device import learner_device
from components.error_panel import error_panel
from components.figures import graph_scale, prose
from components.knowledge_check import Revealed, knowledge_check
from components.lesson_link import link_settings, publish_link
from components.state import shared_model
from workbench.autograd.session import (MAX_PAGE_BACKWARD, PRESETS, PRESETS_BY_KEY, SCHEMA,
                                        THREE_BACKWARD_CODE, UPDATE_OUTSIDE_NO_GRAD_CODE,
                                        AutogradSettings, fresh_moons_bindings, matching_preset,
                                        program_script, program_uses_model, run_session,
                                        three_backward_grad, trained_moons_bindings,
                                        update_outside_no_grad)
from workbench.common.errors import ExplainedError
from workbench.autograd.interpreter import DEFAULT_LIMITS

LINK_KEY = "autograd_graph"
CUSTOM = "custom"

st.title("Autograd graph")
prose(
    "Type a small PyTorch program. PyTorch records a **graph** while it computes; below is that "
    "graph, walked from the output through `grad_fn.next_functions`, with the values from your "
    "program. Then **step through `backward()`** node by node, in the order PyTorch's engine runs "
    "them, and watch the gradients arrive in each leaf's `.grad`."
)

settings, fresh = link_settings(SCHEMA, LINK_KEY)
if fresh or "ag_code" not in st.session_state:
    st.session_state["ag_code"] = settings.code
    st.session_state["ag_backward"] = settings.backward
    st.session_state["ag_retain"] = settings.retain
    st.session_state["ag_zero"] = settings.zero
    st.session_state["ag_layout"] = settings.layout
    st.session_state["ag_saved"] = settings.saved


def _load_preset() -> None:
    preset = PRESETS_BY_KEY.get(st.session_state["ag_preset"])
    if preset is None:
        return
    st.session_state["ag_code"] = preset.code
    st.session_state["ag_backward"] = preset.backward
    st.session_state["ag_retain"] = preset.retain
    st.session_state["ag_zero"] = preset.zero


current = matching_preset(st.session_state.get("ag_code", settings.code))
st.session_state["ag_preset"] = current.key if current else CUSTOM

editor, controls = st.columns([3, 2], gap="large")
with editor:
    if visible("code"):
        st.selectbox("Start from an example", [p.key for p in PRESETS] + [CUSTOM], key="ag_preset",
                     on_change=_load_preset,
                     format_func=lambda k: "your own program" if k == CUSTOM else PRESETS_BY_KEY[k].title)
        code = st.text_area("Program", key="ag_code", height=230,
                            max_chars=DEFAULT_LIMITS.max_source_chars,
                            help="A subset of Python and PyTorch (see *What you can write*). "
                                 "Press Ctrl+Enter or click outside to run it.")
    else:
        code = settings.code
        st.code(code, language="python", line_numbers=True)
    preset = matching_preset(code or "")
    if preset is not None and preset.lesson:
        st.caption(f":material/school: {preset.lesson}")
    language_help()

with controls:
    if visible("backward"):
        backward = st.number_input(
            "Call `backward()` on the output this many times", 0, MAX_PAGE_BACKWARD, key="ag_backward",
            help="After your program, the page calls output.backward() this many times. Programs "
                 "that call backward() themselves usually want 0 here.")
    else:
        backward = settings.backward
    if visible("retain"):
        retain = st.toggle("`retain_graph=True`", key="ag_retain",
                           help="Keep the tensors the graph saved, so backward() can run through it again.")
    else:
        retain = settings.retain
    if visible("zero"):
        zero = st.toggle("Zero the gradients before each call", key="ag_zero",
                         help="Sets every leaf's .grad to None first, as optimizer.zero_grad() does.")
    else:
        zero = settings.zero
    if visible("layout"):
        layout = st.segmented_control("Layout", ["TB", "LR"], key="ag_layout", required=True,
                                      format_func=lambda v: "left to right" if v == "LR" else "top to bottom")
    else:
        layout = settings.layout
    if visible("saved"):
        saved = st.toggle("Show saved tensors", key="ag_saved",
                          help="What each node kept from the forward pass for its backward formula "
                               "(PyTorch's `grad_fn._saved_*`). backward() frees them unless "
                               "retain_graph=True.")
    else:
        saved = settings.saved

settings = AutogradSettings(code=code or "", backward=int(backward), retain=bool(retain), zero=bool(zero),
                            layout=layout or "TB", saved=bool(saved))
publish_link(SCHEMA, LINK_KEY, settings)

bindings = None
uses_trainer = False
if program_uses_model(settings.code):
    shared = shared_model()
    if shared.ready:
        bindings = trained_moons_bindings(shared.model, shared.features, shared.labels)
        uses_trainer = True
        controls.info(f"`model`, `X`, `y`: your moons trainer's model ({shared.description}) in eval "
                      "mode, on the first 16 training points.", icon=":material/hub:")
    else:
        bindings = fresh_moons_bindings()
        controls.info("The moons trainer has not published a model yet: a fresh 2-8-1 MLP and 16 "
                      "seeded moons points stand in for `model`, `X` and `y`.", icon=":material/hub:")

result = run_session(settings, bindings=bindings, device=learner_device())

if result.error is not None:
    where = ("in the page's backward() call" if result.error_line == 0
             else f"on line {result.error_line}")
    if result.error_source == "pytorch":
        explained = result.error
        result_error = ExplainedError(f"{explained.title} ({where})", explained.message,
                                      explained.explanation, explained.fixes, explained.kind)
        error_panel(result_error, key="ag_error")
    else:
        refusal_panel(result.error, key="ag_error")
    source_lines = settings.code.splitlines()
    if result.error_line and 0 < result.error_line <= len(source_lines):
        st.code(f"{result.error_line:>3} | {source_lines[result.error_line - 1]}", language="python")
if result.program_calls_backward and settings.backward:
    controls.caption(":material/info: Your program calls `backward()` itself, so the page adds no "
                     "calls of its own: pick one of your program's calls to step through below.")
for note in result.interpreter.notes:
    st.info(f"**Line {note.line}: {note.title}.** {note.text}", icon=":material/lightbulb:")
if result.printed:
    st.markdown("**Printed**")
    st.code("\n".join(p.text for p in result.printed), language="text")

st.header("The graph, and backward() step by step", divider="gray")
scale = graph_scale()
dot = None
with st.container(key="autograd_graph_main"):
    if result.traces:
        # The step position survives layout and display changes, not a different run.
        run_key = (settings.code, settings.backward, settings.retain, settings.zero)
        signature = hashlib.sha1(repr(run_key).encode()).hexdigest()[:10]
        default = result.page_calls_from if result.page_calls_from < len(result.traces) else 0
        dot = step_through(result.traces, signature=signature, default_trace=default, scale=scale,
                           direction=settings.layout, show_saved=settings.saved)
    elif result.final_graph is not None:
        if result.page_calls == 0:
            st.info("No backward() has run yet: set *Call backward()* to 1 or more to step through it.",
                    icon=":material/info:")
        dot = static_graph(result.final_graph, scale=scale, direction=settings.layout,
                           show_saved=settings.saved)
    elif result.error is not None:
        st.info("Nothing to draw yet: fix the line named above and the graph appears here.",
                icon=":material/info:")
    else:
        st.info("The program made no tensor yet: assign one, e.g. `w = torch.tensor(3.0, "
                "requires_grad=True)`.", icon=":material/info:")
if result.final_graph is not None and result.final_graph.truncated:
    st.caption("The graph is large: only its first nodes are drawn.")

if any(trace.leaf_grads for trace in result.traces):
    st.subheader("Gradients accumulate")
    accumulation_panel(result.traces, zero=settings.zero, retain=settings.retain,
                       page_calls=result.page_calls)

if dot is not None:
    export_buttons(dot, "ag_export")

script = program_script(settings, result.output_name, page_calls=result.page_calls,
                        uses_trainer_model=uses_trainer)
code_panel(script, filename="autograd_program.py", key="ag_code_panel",
           caption="Your program with the page's backward() calls, ready to paste into Python.")


NO_GRAD_OPTIONS = ["Only for speed: the result is the same",
                   "Otherwise PyTorch refuses: w is a leaf that requires grad",
                   "It zeroes w.grad after the update"]


def _three_backward() -> Revealed:
    grad = three_backward_grad()
    return Revealed(f"{grad.item():.1f}", str(grad),
                    "Each backward() adds dL/dw = 2w = 6 into w.grad: 6, then 12, then 18. "
                    "Nothing is overwritten; zero the gradient between steps to start again from 0.",
                    THREE_BACKWARD_CODE)


def _manual_update() -> Revealed:
    message = update_outside_no_grad()
    refused = not message.startswith("no error")
    return Revealed(
        NO_GRAD_OPTIONS[1] if refused else NO_GRAD_OPTIONS[0],
        message,
        "An update is not part of the model, so it must not be recorded. Outside `torch.no_grad()` "
        "PyTorch would have to record `w -= ...` in the graph, which for a leaf that requires grad "
        "it refuses. Inside `no_grad()` the update changes `w` in place and `w` stays a leaf.",
        UPDATE_OUTSIDE_NO_GRAD_CODE)


left, right = st.columns(2)
with left:
    knowledge_check("ag_three_backward",
                    "`w = torch.tensor(3.0, requires_grad=True)`, `L = w ** 2`, then "
                    "`L.backward(retain_graph=True)` three times. What is `w.grad`?",
                    ["6.0", "12.0", "18.0", "an error"], _three_backward)
with right:
    knowledge_check("ag_no_grad_update",
                    "Why does the manual update `w -= lr * w.grad` go inside `with torch.no_grad():`?",
                    NO_GRAD_OPTIONS, _manual_update)

share_panel(schema=SCHEMA, settings=settings, url_path="autograd_graph", script=script,
            title="Autograd graph", key="ag_share")
