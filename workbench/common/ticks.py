"""Axis ticks for figures drawn as SVG on the server (the live view's JavaScript twin is
static/live/ticks.js)."""
from __future__ import annotations

import math


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About `count` ticks between `lo` and `hi`, at steps of 1, 2, 2.5 or 5 times a power of ten."""
    span = hi - lo
    if not span > 0:
        return [lo]
    raw = span / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next((m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw), raw)
    first = math.ceil(lo / step - 1e-9)
    ticks = []
    k = first
    while k * step <= hi + 1e-9 * step:
        ticks.append(0.0 if abs(k * step) < step * 1e-9 else k * step)
        k += 1
    return ticks


def format_tick(value: float, step: float) -> str:
    """A tick's label with as many decimals as its step needs, and a true minus sign."""
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    return f"{value:.{decimals}f}".replace("-", "\u2212")
