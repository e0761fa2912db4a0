// Drawing your own points on the plane (the moons trainer's dataset `drawn`, "Your own points").
//
// A point is [x, y, class]. The scene's `draw` (live_canvas.py's `drawing`) gives the points
// the page holds, the plane's bound, the grid step, the cap and the points each class needs;
// draw_input.js keeps the learner's edits and sends the whole drawing, written exactly as the link's
// `points=` parameter writes it (workbench/common/links.py, PointsParam): `0:x,y_x,y~1:x,y`,
// class 0's points, then class 1's, each in the order they were drawn. The server reads it
// with the same table it reads a link with, so what the view sends is never trusted.
//
// Pure: no DOM. tests/js/draw.test.mjs tests them.

export const HIT_PX = 7;            // a click this close to a point (times the scale) removes it

// Decimal places of the grid step (0.05: 2).
export function decimalsOf(step) {
  const text = String(step);
  return text.includes(".") ? text.split(".")[1].length : 0;
}

// `value` on the grid: rounded to `step` (half away from zero, as Python's PointsParam.snap),
// kept within [-bound, bound].
export function snap(value, step, bound) {
  const perUnit = Math.round(1 / step);
  const ticks = Math.floor(Math.abs(value) * perUnit + 0.5);
  const snapped = Number(((Math.sign(value) || 1) * ticks / perUnit).toFixed(decimalsOf(step)));
  return Math.min(bound, Math.max(-bound, snapped)) + 0;
}

// A grid value in the shortest plain form: 1.25, -0.5, 2, 0.
export function numberText(value, step) {
  const decimals = decimalsOf(step);
  let text = value.toFixed(decimals);
  if (decimals) text = text.replace(/0+$/, "").replace(/\.$/, "");
  return text === "-0" || text === "" ? "0" : text;
}

// The drawing as the link writes it.
export function encodePoints(points, step) {
  const groups = [];
  for (const cls of [0, 1]) {
    const pairs = points.filter((p) => p[2] === cls).map((p) => `${numberText(p[0], step)},${numberText(p[1], step)}`);
    if (pairs.length) groups.push(`${cls}:${pairs.join("_")}`);
  }
  return groups.join("~");
}

// How many points of each class: [class 0, class 1].
export function classCounts(points) {
  const ones = points.filter((p) => p[2] === 1).length;
  return [points.length - ones, ones];
}

// The index of the point nearest to the screen place (px, py) within `radius` pixels, else -1.
// `toScreen` maps plane coordinates to pixels: {px(x), py(y)}.
export function nearestPoint(points, px, py, toScreen, radius) {
  let best = -1, bestDistance = radius * radius;
  points.forEach((p, i) => {
    const d = (toScreen.px(p[0]) - px) ** 2 + (toScreen.py(p[1]) - py) ** 2;
    if (d <= bestDistance) { best = i; bestDistance = d; }
  });
  return best;
}

// The drawing with a point of `cls` added at (x, y) (snapped to the grid), or null with the
// reason when it cannot be: the cap reached, or the same point of the same class already there.
export function addPoint(points, x, y, cls, draw) {
  if (points.length >= draw.max) return { points: null, reason: `at most ${draw.max} points` };
  const point = [snap(x, draw.step, draw.bound), snap(y, draw.step, draw.bound), cls];
  if (points.some((p) => p[0] === point[0] && p[1] === point[1] && p[2] === cls)) {
    return { points: null, reason: "a point of that class is already there" };
  }
  return { points: [...points, point], point };
}

// The drawing without the point at `index`.
export function removePoint(points, index) {
  return points.filter((_, i) => i !== index);
}

// The last drawn point inside the bounds [left, right, bottom, top] (the keyboard cursor's
// cell), else -1.
export function lastPointIn(points, bounds) {
  const [left, right, bottom, top] = bounds;
  for (let i = points.length - 1; i >= 0; i--) {
    const [x, y] = points[i];
    if (x >= left && x <= right && y >= bottom && y <= top) return i;
  }
  return -1;
}

// The drawing in words, for the toolbar and the plane's description.
export function drawSummary(points, draw) {
  const [zeros, ones] = classCounts(points);
  const total = `${points.length} point${points.length === 1 ? "" : "s"} drawn: ${zeros} of class 0, ${ones} of class 1`;
  const short = [zeros, ones].map((n, c) => (n < draw.minimum ? `${draw.minimum - n} more of class ${c}` : null)).filter(Boolean);
  const next = short.length ? `; to train, add ${short.join(" and ")}` : "";
  return `${total} (at most ${draw.max})${next}.`;
}

// The toolbar's count, short enough for one line (the plane below must not move as it changes):
// "12 of 300 points: 5 of class 0, 7 of class 1".
export function countText(points, draw) {
  const [zeros, ones] = classCounts(points);
  return `${points.length} of ${draw.max} points: ${zeros} of class 0, ${ones} of class 1`;
}

// What a change did, for the screen reader: "Added a class 1 point at x₁ = 1.25, x₂ = −0.5. 12 points ...".
export function changeText(verb, point, points, draw) {
  const f = (v) => numberText(v, draw.step).replace("-", "\u2212");
  const where = point ? ` a class ${point[2]} point at x\u2081 = ${f(point[0])}, x\u2082 = ${f(point[1])}` : " every point";
  return `${verb}${where}. ${drawSummary(points, draw)}`;
}

export const DRAW_HELP = "To draw: pick class 0 or class 1 above the plane, then click the plane to add a " +
  "point of it; click a point to remove it, Shift and click to add one even there. With the keyboard, " +
  "move the cursor with the arrow keys, press Enter to add a point at the cursor and Delete to remove " +
  "the last one there.";
