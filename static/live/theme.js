// The view's colours and font, read from Streamlit's theme: the CSS variables its page sets
// (--st-text-color, --st-background-color, --st-font) as they reach the view's root. The app's
// menu switches light and dark without sending a frame, so the view reads them again twice a
// second (view.js's timer) as well as with each page frame, and redraws when they changed.

import { rgbOf } from "./plane.js";

const DEFAULT_TEXT = [26, 29, 35];
const DEFAULT_BACKGROUND = [255, 255, 255];

// The theme from its CSS values: the text and background as [r, g, b], the font, and whether it
// is dark (a background darker than mid grey); `key` tells one theme from another.
export function themeOf(text, background, font) {
  const theme = {
    key: `${text}|${background}|${font}`,
    text: rgbOf(text.trim(), DEFAULT_TEXT),
    background: rgbOf(background.trim(), DEFAULT_BACKGROUND),
    font: font.trim(),
  };
  theme.dark = theme.background.reduce((a, b) => a + b, 0) < 3 * 128;
  return theme;
}

// Read the theme onto the view (`text`, `background`, `font`, `dark`, `themeKey`, and the
// root's data-theme for tests). True: it changed, and the view should redraw.
export function readTheme(view) {
  const style = getComputedStyle(view.root);
  const text = style.getPropertyValue("--st-text-color") || style.color;
  const background = style.getPropertyValue("--st-background-color") || "#ffffff";
  const font = style.getPropertyValue("--st-font") || style.fontFamily || "sans-serif";
  const key = `${text}|${background}|${font}`;
  if (key === view.themeKey) return false;
  const theme = themeOf(text, background, font);
  view.themeKey = theme.key;
  view.text = theme.text;
  view.background = theme.background;
  view.font = theme.font;
  view.dark = theme.dark;
  view.root.dataset.theme = view.dark ? "dark" : "light";
  return true;
}
