"""Child Pythons capped in address space: how a test runs what could make the server hold
gigabytes (or hang) without risking the test run itself."""


def address_space_cap(budget: int) -> str:
    """Python source that caps the process running it at its present address space plus `budget`
    bytes; put it after the child's imports, so that only what follows counts."""
    return f"""
import resource

def _vm_size():
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024

_cap = _vm_size() + {budget}
resource.setrlimit(resource.RLIMIT_AS, (_cap, _cap))
"""
