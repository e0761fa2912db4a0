// Streamlit's theme as the live view reads it (static/live/theme.js): colours, font, dark or
// light, and a redraw only when it changed.
import assert from "node:assert/strict";
import { test } from "node:test";

import { FakeElement } from "./fakes.mjs";
import { readTheme, themeOf } from "../../static/live/theme.js";

test("themeOf: the colours as rgb, dark when the background is darker than mid grey", () => {
  const light = themeOf("rgb(49, 51, 63)", "#ffffff", " Source Sans ");
  assert.deepEqual(light.text, [49, 51, 63]);
  assert.deepEqual(light.background, [255, 255, 255]);
  assert.equal(light.font, "Source Sans");
  assert.equal(light.dark, false);
  const dark = themeOf("#fafafa", "rgb(14, 17, 23)", "serif");
  assert.equal(dark.dark, true);
  assert.notEqual(dark.key, light.key);
  // What cannot be read falls back to dark text on white.
  assert.deepEqual(themeOf("", "nonsense", "x").text, [26, 29, 35]);
  assert.deepEqual(themeOf("", "nonsense", "x").background, [255, 255, 255]);
});

test("readTheme: Streamlit's variables onto the view; true only when they changed", () => {
  let values = { "--st-text-color": "#fafafa", "--st-background-color": "#0e1117", "--st-font": "sans" };
  globalThis.getComputedStyle = (element) => {
    assert.ok(element instanceof FakeElement);
    return { getPropertyValue: (name) => values[name] || "", color: "rgb(1, 2, 3)", fontFamily: "serif" };
  };
  const view = { root: new FakeElement(), themeKey: "" };
  assert.equal(readTheme(view), true);
  assert.equal(view.root.dataset.theme, "dark");
  assert.deepEqual(view.background, [14, 17, 23]);
  assert.equal(view.font, "sans");
  assert.equal(readTheme(view), false);
  // The menu switched to light, without Streamlit's variables: the element's own colour and font.
  values = {};
  assert.equal(readTheme(view), true);
  assert.equal(view.root.dataset.theme, "light");
  assert.deepEqual(view.text, [1, 2, 3]);
  assert.equal(view.font, "serif");
});
