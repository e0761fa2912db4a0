"""The app's two themes as `.streamlit/config.toml` sets them (written once, there), and WCAG's
contrast ratio, so that what the page styles and what the tests check read the same colours."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from workbench.common.palette import BLUE, ORANGE, SKY, VERMILION

CONFIG = Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml"


@dataclass(frozen=True)
class Theme:
    name: str
    primary: str
    background: str
    secondary_background: str
    text: str


def _theme(name: str) -> Theme:
    table = tomllib.loads(CONFIG.read_text())["theme"][name]
    return Theme(name, table["primaryColor"], table["backgroundColor"],
                 table["secondaryBackgroundColor"], table["textColor"])


LIGHT = _theme("light")
DARK = _theme("dark")


def rgb(colour: str) -> tuple[int, int, int]:
    """'#RRGGBB' as three 0-255 channels."""
    value = colour.lstrip("#")
    if len(value) != 6:
        raise ValueError(f"not a #RRGGBB colour: {colour!r}")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def relative_luminance(colour: str) -> float:
    """WCAG 2.2's relative luminance (sRGB, 0 for black to 1 for white)."""
    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(c) for c in rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(foreground: str, background: str) -> float:
    """WCAG's contrast ratio, 1 to 21: at least 4.5 for text, 3 for large text and controls."""
    lighter, darker = sorted((relative_luminance(foreground), relative_luminance(background)),
                             reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def blend(foreground: str, background: str, alpha: float) -> str:
    """`foreground` at opacity `alpha` over `background`, as '#RRGGBB'."""
    mixed = (round(f * alpha + b * (1 - alpha)) for f, b in zip(rgb(foreground), rgb(background),
                                                                 strict=True))
    return "#" + "".join(f"{c:02X}" for c in mixed)


def muted_text(theme: Theme, minimum: float = 4.6) -> str:
    """The theme's text faded toward its background as far as it still reads at `minimum`:1 on
    both backgrounds (captions, code comments). Streamlit fades captions to 60%, which is 4.34:1
    on the light theme's secondary background."""
    return readable(theme.background, theme, minimum)


def readable(colour: str, theme: Theme, minimum: float = 4.6) -> str:
    """`colour` moved toward the theme's text colour just far enough to read at `minimum`:1 on
    both of the theme's backgrounds: the same hue, darker on the light theme, lighter on the dark."""
    for percent in range(0, 101):
        mixed = blend(theme.text, colour, percent / 100)
        if min(contrast(mixed, theme.background),
               contrast(mixed, theme.secondary_background)) >= minimum:
            return mixed
    return theme.text


def focus_ring(theme: Theme, minimum: float = 3.0) -> str:
    """The focus ring's colour: the primary colour, moved toward the text colour only if it did
    not reach `minimum`:1 (WCAG's 3:1 for the parts of controls) on both backgrounds. Streamlit's
    own ring, the primary at half strength, is 2.3:1 on the light background."""
    return readable(theme.primary, theme, minimum)


def sign_colours(theme: Theme, minimum: float = 3.0) -> tuple[str, str]:
    """(negative, positive): the moons trainer's network view draws a weight and an activation
    below zero in blue and above it in orange (Okabe & Ito's pair, apart under every common
    colour-vision deficiency), each moved toward the text colour only as far as it needs to
    read at `minimum`:1 (WCAG's 3:1 for graphics) on both of the theme's backgrounds: Okabe &
    Ito's blue and vermilion on the light theme, their sky blue and orange on the dark."""
    negative, positive = (BLUE, VERMILION) if theme.name == "light" else (SKY, ORANGE)
    return readable(negative, theme, minimum), readable(positive, theme, minimum)
