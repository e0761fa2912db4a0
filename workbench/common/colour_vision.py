"""How a colour looks with a colour-vision deficiency, and how far apart two colours look.

`simulate` applies Machado, Oliveira & Fernandes's model of dichromacy (severity 1.0: protanopia,
deuteranopia, tritanopia) to an sRGB colour: G. M. Machado, M. M. Oliveira, L. A. F. Fernandes,
"A Physiologically-based Model for Simulation of Color Vision Deficiency", IEEE TVCG 15(6),
2009, pp. 1291-1298; the matrices are the paper's table for severity 1.0, applied to linear RGB
(as the paper does, and as DaltonLens and colorspacious do). `delta_e` is CIEDE2000 (Sharma, Wu
& Dalal, "The CIEDE2000 color-difference formula: implementation notes, supplementary test data,
and mathematical observations", Color Research & Application 30(1), 2005), computed in CIELAB
under D65. Both are plain arithmetic: no PyTorch, no plotting library.
"""
from __future__ import annotations

import math
from typing import Literal

Deficiency = Literal["protanopia", "deuteranopia", "tritanopia"]
DEFICIENCIES: tuple[Deficiency, ...] = ("protanopia", "deuteranopia", "tritanopia")
Matrix = tuple[tuple[float, float, float], ...]
RGB = tuple[float, float, float]

# Machado et al. 2009, Table (severity 1.0), rows produce linear R, G, B.
MACHADO: dict[Deficiency, Matrix] = {
    "protanopia": ((0.152286, 1.052583, -0.204868),
                   (0.114503, 0.786281, 0.099216),
                   (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968),
                     (0.280085, 0.672501, 0.047413),
                     (-0.011820, 0.042940, 0.968881)),
    "tritanopia": ((1.255528, -0.076749, -0.178779),
                   (-0.078411, 0.930809, 0.147602),
                   (0.004733, 0.691367, 0.303900)),
}


def hex_to_rgb(colour: str) -> RGB:
    """`#RRGGBB` as sRGB channels in 0..1."""
    text = colour.lstrip("#")
    if len(text) != 6:
        raise ValueError(f"not a #RRGGBB colour: {colour!r}")
    return (int(text[0:2], 16) / 255, int(text[2:4], 16) / 255, int(text[4:6], 16) / 255)


def _linear(channel: float) -> float:
    return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4


def _gamma(channel: float) -> float:
    channel = min(1.0, max(0.0, channel))
    return channel * 12.92 if channel <= 0.0031308 else 1.055 * channel ** (1 / 2.4) - 0.055


def simulate(colour: str, deficiency: Deficiency) -> RGB:
    """`colour` (#RRGGBB) as a dichromat of this kind sees it, as sRGB channels in 0..1."""
    linear = [_linear(c) for c in hex_to_rgb(colour)]
    row_r, row_g, row_b = MACHADO[deficiency]
    return (_gamma(sum(m * c for m, c in zip(row_r, linear, strict=True))),
            _gamma(sum(m * c for m, c in zip(row_g, linear, strict=True))),
            _gamma(sum(m * c for m, c in zip(row_b, linear, strict=True))))


def to_lab(rgb: RGB) -> RGB:
    """sRGB (0..1) to CIELAB, D65 white."""
    r, g, b = (_linear(c) for c in rgb)
    x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047
    y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b
    z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29

    fx, fy, fz = f(x), f(y), f(z)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def delta_e(first: RGB, second: RGB) -> float:
    """CIEDE2000 difference of two sRGB colours (0..1 channels): about 1 is just noticeable."""
    return delta_e_lab(to_lab(first), to_lab(second))


def delta_e_lab(first: RGB, second: RGB) -> float:
    """CIEDE2000 difference of two CIELAB colours (Sharma et al. 2005's equations)."""
    l1, a1, b1 = first
    l2, a2, b2 = second
    c_mean = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_mean ** 7 / (c_mean ** 7 + 25 ** 7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if c2p else 0.0
    dl, dc = l2 - l1, c2p - c1p
    dh = 0.0
    if c1p * c2p:
        dh = h2p - h1p
        dh = dh - 360 if dh > 180 else dh + 360 if dh < -180 else dh
    big_dh = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh / 2))
    l_mean, cp_mean = (l1 + l2) / 2, (c1p + c2p) / 2
    h_mean = h1p + h2p
    if c1p * c2p:
        h_mean = (h1p + h2p) / 2 if abs(h1p - h2p) <= 180 else \
            (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (1 - 0.17 * math.cos(math.radians(h_mean - 30)) + 0.24 * math.cos(math.radians(2 * h_mean))
         + 0.32 * math.cos(math.radians(3 * h_mean + 6)) - 0.20 * math.cos(math.radians(4 * h_mean - 63)))
    sl = 1 + 0.015 * (l_mean - 50) ** 2 / math.sqrt(20 + (l_mean - 50) ** 2)
    sc, sh = 1 + 0.045 * cp_mean, 1 + 0.015 * cp_mean * t
    rt = (-2 * math.sqrt(cp_mean ** 7 / (cp_mean ** 7 + 25 ** 7))
          * math.sin(math.radians(60 * math.exp(-(((h_mean - 275) / 25) ** 2)))))
    return math.sqrt((dl / sl) ** 2 + (dc / sc) ** 2 + (big_dh / sh) ** 2
                     + rt * (dc / sc) * (big_dh / sh))


def seen_difference(first: str, second: str, deficiency: Deficiency | None = None) -> float:
    """CIEDE2000 between two #RRGGBB colours as a viewer with `deficiency` (None: typical
    colour vision) sees them."""
    if deficiency is None:
        return delta_e(hex_to_rgb(first), hex_to_rgb(second))
    return delta_e(simulate(first, deficiency), simulate(second, deficiency))
