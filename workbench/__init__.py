"""The PyTorch logic of the workbench: no Streamlit here, so every module can be read,
imported and unit-tested on its own.

A web server shares its cores between many learners. PyTorch reads OMP_NUM_THREADS when it is
first imported, so the single-thread setting has to be in the environment before any module
below imports torch (see workbench.common.device.configure_threads for the measured reason).
"""
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
