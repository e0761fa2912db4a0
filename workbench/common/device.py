"""Which device PyTorch computes on, and the facts a learner checks after installing it.

The server picks its best device once (CUDA, then Apple's MPS, then the CPU); each learner may
still choose the CPU. Threads are set once per process: on a shared 2-core server one intra-op
thread per step is faster than two (bench/threads.py measures it), because the other core is
busy serving another learner.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch

SERVER_THREADS = 1
AUTO = "auto"


def configure_threads(threads: int = SERVER_THREADS) -> int:
    """Set torch's intra-op thread count for the whole process; returns the count in force."""
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return torch.get_num_threads()


def mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def best_device() -> torch.device:
    """CUDA if a GPU answers, else MPS on Apple silicon, else the CPU."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    if mps_available():
        return torch.device("mps")
    return torch.device("cpu")


def device_choices(server_device: torch.device) -> list[str]:
    """What a learner may pick: the server's device, and always the CPU."""
    return [AUTO, "cpu"] if server_device.type != "cpu" else [AUTO]


def resolve_choice(choice: str, server_device: torch.device) -> torch.device:
    """A learner's choice ('auto' or 'cpu') as a device; anything unknown means 'auto'."""
    if choice == "cpu":
        return torch.device("cpu")
    return server_device


@dataclass(frozen=True)
class DeviceDiagnostics:
    torch_version: str
    cuda_available: bool
    cuda_version: str | None
    gpu_name: str | None
    compute_capability: str | None
    mps_available: bool
    selected: str
    cpu_threads: int
    interop_threads: int
    cpu_count: int

    def rows(self) -> list[tuple[str, str]]:
        """The diagnostics as (what, value) rows, in the order a learner checks them."""
        return [
            ("torch.__version__", self.torch_version),
            ("torch.cuda.is_available()", str(self.cuda_available)),
            ("torch.version.cuda", self.cuda_version or "None (CPU build)"),
            ("torch.cuda.get_device_name(0)", self.gpu_name or "no GPU"),
            ("torch.cuda.get_device_capability(0)", self.compute_capability or "no GPU"),
            ("torch.backends.mps.is_available()", str(self.mps_available)),
            ("device selected", self.selected),
            ("torch.get_num_threads()", str(self.cpu_threads)),
            ("torch.get_num_interop_threads()", str(self.interop_threads)),
            ("os.cpu_count()", str(self.cpu_count)),
        ]


def diagnose(selected: torch.device) -> DeviceDiagnostics:
    cuda = torch.cuda.is_available()
    name = capability = None
    if cuda:
        name = torch.cuda.get_device_name(0)
        major, minor = torch.cuda.get_device_capability(0)
        capability = f"{major}.{minor}"
    return DeviceDiagnostics(
        torch_version=torch.__version__,
        cuda_available=cuda,
        cuda_version=torch.version.cuda,
        gpu_name=name,
        compute_capability=capability,
        mps_available=mps_available(),
        selected=str(selected),
        cpu_threads=torch.get_num_threads(),
        interop_threads=torch.get_num_interop_threads(),
        cpu_count=os.cpu_count() or 1,
    )


DIAGNOSTICS_SCRIPT = '''\
import os
import torch

print("torch", torch.__version__)
print("CUDA available:", torch.cuda.is_available(), "| CUDA build:", torch.version.cuda)
if torch.cuda.is_available():
    print("GPU:", torch.cuda.get_device_name(0),
          "| compute capability:", torch.cuda.get_device_capability(0))
mps = getattr(torch.backends, "mps", None)
print("MPS available:", bool(mps and mps.is_available()))
device = ("cuda" if torch.cuda.is_available()
          else "mps" if mps and mps.is_available() else "cpu")
print("device selected:", device)
print("threads:", torch.get_num_threads(), "of", os.cpu_count(), "cores")
x = torch.ones(2, 3, device=device)
print("a tensor on it:", x.device, tuple(x.shape), x.dtype)
'''
