"""Home: what the workbench teaches, the tools, and the device diagnostics."""
import pandas as pd
import streamlit as st

from components.code_panel import code_panel
from components.device import learner_device
from components.figures import presenting
from components.stage import page_header
from components.knowledge_check import Answer, knowledge_check
from components.plain_text import code_span, md
from app_pages.navigation import HOME, LESSONS_PAGE, TOOLS
from workbench.common.device import DIAGNOSTICS_SCRIPT, diagnose
from workbench.common.device_checks import DEVICE_MISMATCH, DEVICE_RULE, cross_device_demo

page_header("PyTorch Workbench",
    "Learn how PyTorch works by **poking at the real thing**. Every number on these pages is "
    "computed by PyTorch while you watch: tensors and their memory, the graph autograd records, "
    "a network learning, and the DataLoader feeding it. For students of a first deep-learning "
    "course, for teachers who project it in class, and for engineers who want to check a hunch."
)

# A page link's label is one line cut with an ellipsis; in a narrow card (presenter mode's
# 1.4x type, or the sidebar open) "Tensor inspector" became "Tensor inspe". The cards' titles
# wrap instead: the whole name on two lines rather than part of it on one (and, projected, the
# two lines closer together; a title on one line keeps its height in the normal view).
st.html(f"""<style>
.st-key-{HOME.main_key} [data-testid="stPageLink-NavLink"] > span,
.st-key-{HOME.main_key} [data-testid="stPageLink-NavLink"] > span * {{
  white-space: normal; overflow: visible; text-overflow: clip;
  {"line-height: 1.3;" if presenting() else ""}
}}
</style>""")

with st.container(key=HOME.main_key):
    for column, tool in zip(st.columns(len(TOOLS)), TOOLS, strict=True):
        with column, st.container(border=True, height="stretch"):
            st.page_link(tool.script, label=f"**{tool.title}**", icon=tool.icon)
            st.markdown(tool.blurb)
    st.page_link(LESSONS_PAGE.script, label=f"**{LESSONS_PAGE.title}**: {LESSONS_PAGE.blurb}",
                 icon=LESSONS_PAGE.icon)

st.header("Does PyTorch see your hardware?", divider="gray")
st.markdown(
    "The first thing to check after installing PyTorch. This table is this server's answer; "
    "the script below gives yours when you run it on your own machine."
)
diagnostics = diagnose(learner_device())
table, summary = st.columns([3, 2], gap="large")
# st.table renders Markdown in cells: code spans keep `torch.__version__` from turning bold.
rows = [(f"`{check}`", value) for check, value in diagnostics.rows()]
table.table(pd.DataFrame(rows, columns=["check", "value"]), hide_index=True)
with summary:
    st.metric("PyTorch computes on", diagnostics.selected)
    if diagnostics.cuda_available:
        st.markdown(f"A CUDA GPU answers: **{diagnostics.gpu_name}** (compute capability "
                    f"{diagnostics.compute_capability}).")
    elif diagnostics.mps_available:
        st.markdown("Apple's Metal (MPS) backend answers: tensors can live on `mps`.")
    else:
        st.markdown("No GPU answers, so tensors live on the CPU. On your own machine, "
                    "`torch.cuda.is_available()` should say `True` if you installed a CUDA build "
                    "and have an NVIDIA driver.")
    st.caption(f"torch uses {diagnostics.cpu_threads} of {diagnostics.cpu_count} cores per "
               "operation here: a shared server keeps the other cores for other learners.")
code_panel(DIAGNOSTICS_SCRIPT, filename="check_device.py", key="home_diagnostics",
           title="Run the same checks on your machine")

st.header("When tensors on two devices meet", divider="gray")
demo = cross_device_demo(learner_device())
if demo.simulated:
    st.markdown(
        "Every tensor of an operation must live on one device. **No GPU answers on this server**, "
        "so no CUDA tensor can be made here; in the check below and the demonstration it reveals, "
        "a tensor on PyTorch's `meta` device (a shape with no memory) **stands in for the GPU "
        "tensor**. PyTorch refuses to mix `meta` and CPU tensors by the same rule; only the "
        "wording of its message differs from a GPU's.")
else:
    st.markdown(f"Every tensor of an operation must live on one device. This server has a GPU "
                f"(`{demo.other}`): the check below and its demonstration run on it for real.")


def what_pytorch_did(_: Answer) -> None:
    """Under the revealed check: the demonstration, run on this server just now."""
    st.markdown(f"**What PyTorch did**, just now, with `a = torch.ones(2, 3)` on the CPU and "
                f"`b = torch.ones(2, 3, device={demo.other!r})`"
                + (" (the stand-in):" if demo.simulated else ":"))
    rows = ([demo.no_gpu] if demo.no_gpu else []) + demo.meetings
    st.table(pd.DataFrame([{
        "code": code_span(m.code),
        "what PyTorch did": md(f"raised {m.error_type}: {m.outcome}" if m.raised else
                               f"worked: {m.outcome}")} for m in rows]), hide_index=True)
    if demo.no_gpu:
        st.caption(f"{code_span(demo.no_gpu.code)} is the real answer of this server's PyTorch "
                   "build to a request for a GPU tensor: that is why the `meta` device stands in.")
    st.markdown(DEVICE_RULE)
    code_panel(demo.code, filename="devices_meet.py", key="home_devices_code",
               title="Run it on your machine")


knowledge_check(DEVICE_MISMATCH, then=what_pytorch_did)
