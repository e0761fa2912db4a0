"""Home: what the workbench teaches, the tools, and the device diagnostics."""
import pandas as pd
import streamlit as st
import torch

from components.code_panel import code_panel
from components.device import learner_device
from components.figures import prose
from components.knowledge_check import Revealed, knowledge_check
from components.navigation import HOME, LESSONS_PAGE, built_tools
from workbench.common.device import DIAGNOSTICS_SCRIPT, diagnose

st.title("PyTorch Workbench")
prose(
    "Learn how PyTorch works by **poking at the real thing**. Every number on these pages is "
    "computed by PyTorch while you watch: tensors and their memory, the graph autograd records, "
    "a network learning, and the DataLoader feeding it. For students of a first deep-learning "
    "course, for teachers who project it in class, and for engineers who want to check a hunch."
)

with st.container(key=HOME.main_key):
    tools = built_tools()
    if tools:
        columns = st.columns(min(len(tools), 4))
        for column, tool in zip(columns, tools, strict=False):
            with column, st.container(border=True, height="stretch"):
                st.page_link(tool.script, label=f"**{tool.title}**", icon=tool.icon)
                st.markdown(tool.blurb)
        st.page_link(LESSONS_PAGE.script, label=f"**{LESSONS_PAGE.title}**: {LESSONS_PAGE.blurb}",
                     icon=LESSONS_PAGE.icon)
    else:
        st.info("The tools arrive here as they are built.", icon=":material/construction:")

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


def _device_mismatch() -> Revealed:
    code = ('a = torch.ones(2, device="cpu")\n'
            'b = torch.ones(2, device="meta")  # stands in for a GPU tensor\n'
            "a + b")
    a = torch.ones(2, device="cpu")
    b = torch.ones(2, device="meta")
    try:
        a + b
    except (RuntimeError, NotImplementedError) as exc:
        message = str(exc).splitlines()[0]
        return Revealed("PyTorch raises an error", message,
                        "PyTorch never copies between devices implicitly: move one side with "
                        "`.to(device)` first. (The `meta` device stands in for a GPU here; "
                        "on a real GPU the message names `cuda:0` and `cpu`.)", code)
    return Revealed("It works and gives a CPU tensor", str(a + b), "", code)


knowledge_check(
    "home_device_mismatch",
    "A tensor on the CPU is added to a tensor on another device. What happens?",
    ["It works and gives a CPU tensor", "PyTorch copies both to the GPU", "PyTorch raises an error"],
    _device_mismatch,
)
