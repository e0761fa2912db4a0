// The legends under the plane and the curves, as HTML (figcaptions of the view's figures): the
// classes by colour and shape, the splits by fill, the boundary, and the curves' lines, with a
// pinned run's in grey when the page compares two runs. Rebuilt only when they change.

import { PINNED_ALPHA } from "./curves.js";
import { FILL_WORDS } from "./access.js";
import { css } from "./plane.js";

// A run's name from the server, as text in the legend's HTML.
export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const swatch = (colour, shape) => `<span class="swatch ${shape}" style="--c:${colour}"></span>`;

// The plane's legend for scene `sc`; `text` is the theme's text colour, [r, g, b].
export function boundaryLegendHtml(sc, text) {
  // The class by colour and shape, the split by fill: five entries instead of one per pair.
  // Regression: the colour and shape are the target's sign.
  const classWords = sc.regression ? ["target below 0", "target 0 or more"] : ["class 0", "class 1"];
  const items = [0, 1].map((label) => `<span>${swatch(sc.colours.classes[label], `${sc.class_shapes[label]} filled`)}` +
                                      `${classWords[label]}: ${sc.colours.class_names[label]} ${sc.class_shapes[label]}s</span>`);
  for (const group of sc.groups) {
    items.push(`<span>${swatch(css(text), `circle ${group.fill}`)}${group.label}: ${FILL_WORDS[group.fill]}</span>`);
  }
  const board = sc.draw && !sc.groups.length;     // drawn points too few to train: no model yet
  if (board) items.push(`<span>${swatch(css(text), "circle filled")}your points: filled</span>`);
  else if (sc.regression) items.push("<span>shading: the model's output value, \u22121 to 1</span>");
  else items.push(`<span>${swatch(css(text), "line")}decision boundary (P = 0.5)</span>`);
  if (sc.blobs.bayes) items.push(`<span>${swatch(sc.colours.bayes, "dashed")}best possible boundary (Bayes)</span>`);
  return items.join("");
}

// The curves' legend for scene `sc` and the pinned run (null: none).
export function curvesLegendHtml(sc, pinned, text) {
  const [train, val] = sc.colours.curves;
  // Comparing: this run's lines are named by what sets it apart, the pinned run's follow in grey.
  const now = pinned ? `${escapeHtml(pinned.now_label)} ` : "";
  const items = [
    `<span>${swatch(train, "line")}${now}train</span>`, `<span>${swatch(val, "dashed")}${now}validation</span>`,
  ];
  if (pinned) {
    const grey = css(text, PINNED_ALPHA), name = escapeHtml(pinned.label);
    items.push(`<span class="pinned">${swatch(grey, "line")}${name} train</span>`,
               `<span class="pinned">${swatch(grey, "dashed")}${name} validation</span>`);
  }
  items.push(sc.regression ? (Number.isFinite(sc.best_r2)
    ? `<span>${swatch(sc.colours.bayes, "dotted")}best possible test R\u00b2 ${sc.best_r2.toFixed(3)}</span>`
    : "<span>best possible test R\u00b2 unknown</span>")
    : Number.isFinite(sc.bayes_accuracy)
    ? `<span>${swatch(sc.colours.bayes, "dotted")}best possible test accuracy ${(100 * sc.bayes_accuracy).toFixed(2)}%</span>`
    : "<span>best possible test accuracy unknown (drawn points)</span>");
  return items.join("");
}

// Both legends into the view's figcaptions. Compared with what was set last, not with innerHTML
// (the browser respells the style attributes): drawn with every frame, the legends are rebuilt
// only when they change.
export function drawLegends(view) {
  const boundary = boundaryLegendHtml(view.scene, view.text);
  if (view.boundaryLegendHtml !== boundary) view.boundaryLegend.innerHTML = view.boundaryLegendHtml = boundary;
  const curves = curvesLegendHtml(view.scene, view.pinned, view.text);
  if (view.curvesLegendHtml !== curves) view.curvesLegend.innerHTML = view.curvesLegendHtml = curves;
}
