"""Home: what the workbench teaches, the tools, and the device diagnostics."""
import pandas as pd
import streamlit as st

from components.code_panel import code_panel
from components.device import learner_device
from components.figures import prose
from components.knowledge_check import knowledge_check
from app_pages.navigation import HOME, LESSONS_PAGE, TOOLS
from workbench.common.device import DIAGNOSTICS_SCRIPT, diagnose
from workbench.common.device_checks import DEVICE_MISMATCH

st.title("PyTorch Workbench")
prose(
    "Learn how PyTorch works by **poking at the real thing**. Every number on these pages is "
    "computed by PyTorch while you watch: tensors and their memory, the graph autograd records, "
    "a network learning, and the DataLoader feeding it. For students of a first deep-learning "
    "course, for teachers who project it in class, and for engineers who want to check a hunch."
)

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

knowledge_check(DEVICE_MISMATCH)
