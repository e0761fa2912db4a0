// The legends under the plane and the curves (static/live/legends.js): what they list for a
// classification, a regression and a drawing, a pinned run's names escaped, and the figcaptions
// rebuilt only when the HTML changes.
import assert from "node:assert/strict";
import { test } from "node:test";

import { boundaryLegendHtml, curvesLegendHtml, drawLegends, escapeHtml } from "../../static/live/legends.js";

const TEXT = [26, 29, 35];
const SCENE = {
  colours: { classes: ["#0072b2", "#e69f00"], class_names: ["blue", "orange"], bayes: "#999999", curves: ["#111111", "#222222"] },
  class_shapes: ["circle", "square"], groups: [{ fill: "filled", label: "train" }, { fill: "dot", label: "test" }],
  blobs: { bayes: new Uint8Array(1) }, bayes_accuracy: 0.9731,
};
const spans = (html) => html.match(/<span(?: class="pinned")?>(?:<span[^>]*><\/span>)?[^<]*<\/span>/g).map(
  (s) => s.replace(/<[^>]+>/g, ""));

test("escapeHtml: a run's name is text, never markup", () => {
  assert.equal(escapeHtml(`<b>"SGD" & 'lr'</b>`), "&#60;b&#62;&#34;SGD&#34; &#38; &#39;lr&#39;&#60;/b&#62;");
  assert.equal(escapeHtml(0.5), "0.5");
});

test("the plane's legend: classes by colour and shape, splits by fill, the boundary and Bayes's", () => {
  assert.deepEqual(spans(boundaryLegendHtml(SCENE, TEXT)), [
    "class 0: blue circles", "class 1: orange squares", "train: filled", "test: open with a dot",
    "decision boundary (P = 0.5)", "best possible boundary (Bayes)"]);
  const html = boundaryLegendHtml(SCENE, TEXT);
  assert.ok(html.includes('class="swatch square filled" style="--c:#e69f00"'), html);
  assert.ok(html.includes("--c:rgba(26,29,35,1)"), html);
});

test("the plane's legend for a regression and for a drawing too small to train", () => {
  const regression = spans(boundaryLegendHtml({ ...SCENE, regression: true, blobs: {} }, TEXT));
  assert.equal(regression[0], "target below 0: blue circles");
  assert.equal(regression.at(-1), "shading: the model's output value, \u22121 to 1");
  const board = spans(boundaryLegendHtml({ ...SCENE, groups: [], draw: { points: [] }, blobs: {} }, TEXT));
  assert.deepEqual(board.slice(2), ["your points: filled"]);
});

test("the curves' legend: train and validation, Bayes's accuracy, and a pinned run in grey", () => {
  assert.deepEqual(spans(curvesLegendHtml(SCENE, null, TEXT)),
                   ["train", "validation", "best possible test accuracy 97.31%"]);
  const pinned = { label: "pinned: <SGD>", now_label: "now: AdamW" };
  const html = curvesLegendHtml({ ...SCENE, bayes_accuracy: NaN }, pinned, TEXT);
  assert.deepEqual(spans(html), ["now: AdamW train", "now: AdamW validation", "pinned: &#60;SGD&#62; train",
                                 "pinned: &#60;SGD&#62; validation", "best possible test accuracy unknown (drawn points)"]);
  assert.ok(html.includes("--c:rgba(26,29,35,0.5)"), html);
  assert.equal(spans(curvesLegendHtml({ ...SCENE, regression: true, best_r2: 0.8549 }, null, TEXT)).at(-1),
               "best possible test R\u00b2 0.855");
});

test("drawLegends writes a figcaption only when its HTML changes", () => {
  const writes = [];
  const caption = (name) => ({ set innerHTML(html) { writes.push([name, html]); } });
  const view = { scene: SCENE, pinned: null, text: TEXT, boundaryLegend: caption("plane"), curvesLegend: caption("curves") };
  drawLegends(view);
  drawLegends(view);
  assert.deepEqual(writes.map((w) => w[0]), ["plane", "curves"]);
  assert.equal(writes[0][1], boundaryLegendHtml(SCENE, TEXT));
  view.pinned = { label: "pinned", now_label: "now" };
  drawLegends(view);
  assert.deepEqual(writes.map((w) => w[0]), ["plane", "curves", "curves"]);
});
