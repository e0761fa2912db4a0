"""The one shared device (chosen once per process) and each learner's own choice."""
from __future__ import annotations

import streamlit as st
import torch

from components.state import device_choice
from workbench.common.device import best_device, configure_threads, resolve_choice


@st.cache_resource(show_spinner=False)
def server_device() -> torch.device:
    """The best device on this server, found once per process; immutable, so safe to share."""
    configure_threads()
    return best_device()


def learner_device() -> torch.device:
    """The device this learner computes on: the server's, unless they chose the CPU."""
    return resolve_choice(device_choice().choice, server_device())
