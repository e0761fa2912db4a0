"""The join link as a QR code, drawn here as SVG (segno, pure Python): no request leaves the
server, and a phone in the back row reads it off the projector.

Black on white whatever the page's theme: scanners expect dark modules on a light ground, with a
quiet zone of four modules around them. No fixed size: the page gives it its width.
"""
from __future__ import annotations

import segno

from workbench.common.palette import BLACK, WHITE


def qr_svg(url: str) -> str:
    code = segno.make(url, error="m")
    return code.svg_inline(scale=1, border=4, dark=BLACK, light=WHITE, omitsize=True,
                           svgclass="class-qr", lineclass=None)
