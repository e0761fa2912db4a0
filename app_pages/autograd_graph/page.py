"""Autograd graph: type a small PyTorch program, see the graph it records, step through backward."""
import hashlib

import streamlit as st

from app_pages.autograd_graph.editor import note_link, program_editor, work
from app_pages.autograd_graph.view import (COLLAPSED_KEY, COLLAPSED_WORDS, accumulation_panel,
                                           decisions_panel, export_buttons, final_grads_panel, legend,
                                           run_output, run_problems, static_graph, step_through,
                                           wrap_labels)
from components.classroom import share_panel
from components.code_panel import code_panel
from components.device import learner_device
from components.figures import graph_scale
from components.stage import page_header
from components.keyboard import skip_to_controls
from components.knowledge_check import knowledge_check
from components.lesson_link import fixed_settings_note, link_settings, publish_link
from components.settings_form import SettingsForm
from components.state import shared_model
from workbench.autograd_graph.checks import INFERENCE_TENSOR, THREE_BACKWARD, UPDATE_OUTSIDE_NO_GRAD
from workbench.autograd_graph.session import (fresh_moons_bindings, leaf_names, program_script,
                                              program_uses_model, run_session, trained_moons_bindings)
from workbench.autograd_graph.settings import TABLE
from workbench.common.jobs import SCHEDULER

LINK_KEY = "autograd_graph"
TOGGLE_KEYS = ("ag_retain", "ag_zero", "ag_saved", COLLAPSED_KEY)

fixed_slot = page_header("Autograd graph",
    "Type a small PyTorch program (under the graph). PyTorch records a **graph** while it "
    "computes; the page draws that graph, walked from the output through "
    "`grad_fn.next_functions`, with the values from your program. Then **step through "
    "`backward()`** node by node, in the order PyTorch's engine runs them, and watch the "
    "gradients arrive in each leaf's `.grad`.", figure_first=True
)

# ---- settings: the link (or this learner's own, back from another page), then the widgets
mine = work()
from_link = any(name in st.query_params for name in TABLE.names)
linked, fresh = link_settings(TABLE, LINK_KEY)
note_link(mine, linked, from_link and fresh)
form = SettingsForm(TABLE, linked, fresh, prefix="ag_")

# The first screen is the stage (the graph beside Next node and the step's story), on a laptop,
# a phone and a projector alike; what the run said follows it, then the program and the
# settings. The stage is drawn once the program has run, into this place at the top.
stage_slot = st.container(key="autograd_stage")
below_stage = st.container()
st.subheader("Your program and the settings", divider="gray", anchor=False)
editor, controls = st.columns([3, 2], gap="large")
with editor:
    program_editor(form, mine)
with controls:
    form.draw("backward", "retain", "zero")
    form.value("layout", required=True)
    form.draw("saved")
    if COLLAPSED_KEY not in st.session_state:
        st.session_state[COLLAPSED_KEY] = mine.collapsed
    st.toggle("Collapsed view", key=COLLAPSED_KEY, help=COLLAPSED_WORDS)
    mine.collapsed = st.session_state[COLLAPSED_KEY]
    wrap_labels(TOGGLE_KEYS)
settings = form.settings()
publish_link(TABLE, LINK_KEY, settings)
fixed_settings_note(fixed_slot, TABLE, settings)
mine.shown = settings

# ---- compute: the program, with the trainer's model when it asks for one
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

with SCHEDULER.sharing():       # a long program takes turns with the learners training
    result = run_session(settings, bindings=bindings, device=learner_device())
script = program_script(settings, result.output_name, page_calls=result.page_calls,
                        uses_trainer_model=uses_trainer, leaves=leaf_names(result.interpreter.env))

# ---- draw: what the run said, the graph and its backward steps, the code, the checks
def draw_graph() -> str | None:
    """The graph and its walk, on the stage; the DOT text on screen."""
    shown = dict(scale=graph_scale(), direction=settings.layout, show_saved=settings.saved,
                 collapsed=mine.collapsed, stage=True)
    if result.traces:
        # The step position survives layout and display changes, not a different run.
        run_key = (settings.code, settings.backward, settings.retain, settings.zero)
        signature = hashlib.sha1(repr(run_key).encode()).hexdigest()[:10]
        default = result.page_calls_from if result.page_calls_from < len(result.traces) else 0
        return step_through(result.traces, signature=signature, default_trace=default, work=mine,
                            **shown)
    # No backward() to step through: the skip link goes to the setting that adds one.
    skip_to_controls(form.key("backward"))
    where = "below"
    stopped_at = result.error_line if result.error is not None else None
    # A program that stopped before recording any operation leaves at most one tensor: drawn
    # alone it would be a stray "output" box, not a graph.
    if result.final_graph is not None and not (stopped_at and len(result.final_graph.nodes) < 2):
        if stopped_at:
            note = (f"**The program stopped at line {stopped_at}** (the error {where}), so no "
                    "backward() ran: this is the graph PyTorch recorded before that line. Fix "
                    "it to step through backward().")
        elif result.page_calls == 0 and settings.backward == 0:
            note = "No backward() has run yet: set *Call backward()* to 1 or more to step through it."
        else:
            note = ""
        return static_graph(result.final_graph, note=note, **shown)
    if result.error is not None:
        line = f"line {stopped_at}" if stopped_at else "the line"
        st.info(f"Nothing to draw yet: the program stopped at {line} (the error {where}) before "
                "PyTorch recorded an operation. Fix it and the graph appears here.",
                icon=":material/info:")
    else:
        st.info("The program made no tensor yet: assign one, e.g. `w = torch.tensor(3.0, "
                "requires_grad=True)`.", icon=":material/info:")
    return None


def what_the_run_said() -> None:
    if result.program_calls_backward and settings.backward:
        controls.caption(":material/info: Your program calls `backward()` itself, so the page adds no "
                         "calls of its own: pick one of your program's calls to step through above.")
    run_output(result)
    decisions_panel(result)


with stage_slot, st.container(key="autograd_graph_main"):    # the page's main picture
    dot = draw_graph()
# Under the stage: the error it refers to, what the drawing means, what the program said.
with below_stage:
    run_problems(result, settings.code)
    if dot is not None:
        legend(mine.collapsed, settings.saved,
               result.traces[0].graph if result.traces else result.final_graph)
    what_the_run_said()
if result.final_graph is not None and result.final_graph.truncated:
    st.caption("The graph is large: only its first nodes are drawn.")

# The gradients are the answer to the page's question (and to a lesson step's check): they
# come folded, to open once the learner has predicted them or stepped backward() to the end.
grads_after_calls = any(trace.leaf_grads for trace in result.traces)
if grads_after_calls or result.final_grads:
    with st.expander("**The gradients after the run**: predict them, then open",
                     icon=":material/visibility:"):
        if grads_after_calls:
            st.subheader("Gradients accumulate")
            accumulation_panel(result.traces, zero=settings.zero, retain=settings.retain,
                               page_calls=result.page_calls)
        final_grads_panel(result)
if dot is not None:
    export_buttons(dot, "ag_export")

code_panel(script, filename="autograd_program.py", key="ag_code_panel",
           caption="Your program with the page's backward() calls, ready to paste into Python.")

left, right = st.columns(2)
with left:
    knowledge_check(THREE_BACKWARD)
with right:
    knowledge_check(UPDATE_OUTSIDE_NO_GRAD)
knowledge_check(INFERENCE_TENSOR)

share_panel(schema=TABLE, settings=settings, url_path="autograd_graph", script=script,
            title="Autograd graph", key="ag_share", labels=TABLE.labels())
