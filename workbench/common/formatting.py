"""Small, shared ways of writing numbers for people."""
from __future__ import annotations

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def human_bytes(n: int) -> str:
    """1536 -> '1.5 KiB'; exact below 1 KiB. Binary units, as memory is counted."""
    if n < 1024:
        return f"{n} B"
    size = float(n)
    for unit in _UNITS[1:]:
        size /= 1024
        if size < 1024 or unit == _UNITS[-1]:
            return f"{size:.3g} {unit}" if size < 100 else f"{size:.0f} {unit}"
    raise AssertionError("unreachable")
