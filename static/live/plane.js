// The moons trainer's live view: the plane (the predicted probability shaded over it, its 0.5
// contour, the points, axes and colour bar) and the readout under the pointer.
//
// The pure parts (colours, the colour mapping, the contour) are exported for tests
// (tests/js/plane.test.mjs) and touch no DOM; the drawing functions take the view (view.js),
// whose canvases, theme, scene and frame they draw.

import { cellBounds, outputText } from "./access.js";
import { formatTick, niceTicks } from "./ticks.js";

export const FONT_PX = 12;         // the canvases' text size at scale 1

export function hexToRgb(hex) {
  const h = hex.replace("#", "");
  return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16));
}

export function rgbOf(cssColour, fallback) {
  const m = /rgba?\(([^)]+)\)/.exec(cssColour || "");
  if (m) return m[1].split(",").slice(0, 3).map((v) => parseFloat(v));
  if ((cssColour || "").startsWith("#") && cssColour.length >= 7) return hexToRgb(cssColour);
  return fallback;
}

// How far `element` sits below where it would be with everything scrolled to the top: the

export function mix(a, b, t) {
  return [0, 1, 2].map((i) => a[i] + (b[i] - a[i]) * t);
}

export function css(rgb, alpha = 1) {
  return `rgba(${rgb.map((v) => Math.round(v)).join(",")},${alpha})`;
}

// The colour mapping: P (0..1) to a colour, low -> middle -> high, laid over `base` with `opacity`.
export function shadeColour(p, low, middle, high, base, opacity) {
  const colour = p < 0.5 ? mix(low, middle, p / 0.5) : mix(middle, high, (p - 0.5) / 0.5);
  return mix(base, colour, opacity);
}

// The same for each of a uint8 grid's 256 values (255 is P = 1): [r, g, b] at 3 * value. With
// `discrete` (TensorFlow Playground's "discretize output") each value takes its predicted class's
// full shade: P >= 0.5 (value 128 and up, where the logit is >= 0) class 1, else class 0.
export function shadeTable(low, middle, high, base, opacity, discrete = false) {
  const shades = new Uint8ClampedArray(256 * 3);
  for (let v = 0; v < 256; v++) {
    const p = discrete ? (v >= 128 ? 1 : 0) : v / 255;
    shades.set(shadeColour(p, low, middle, high, base, opacity), 3 * v);
  }
  return shades;
}

// Marching squares: the segments where a grid (rows = y, cols = x, values at the nodes) crosses
// `level`, in grid coordinates (col, row). Saddle cells are resolved by the cell's mean.
// The plane's title, longest first (the view draws the longest that fits): it names the solid
// line only when there is one. Where P stays on one side of 0.5 over the whole plane (a fresh
// model often does), no line is drawn, and the title says which class every point gets.
export function planeTitles(epoch, hasBoundary, aboveHalf) {
  if (hasBoundary) {
    return [`Epoch ${epoch}: the solid line is the decision boundary (P = 0.5)`,
            `Epoch ${epoch}: solid line = decision boundary`, `Epoch ${epoch}`];
  }
  const side = aboveHalf ? "class 1 (P > 0.5)" : "class 0 (P < 0.5)";
  return [`Epoch ${epoch}: no decision boundary on this plane: every point is ${side}`,
          `Epoch ${epoch}: no boundary here, all ${aboveHalf ? "class 1" : "class 0"}`, `Epoch ${epoch}`];
}

// A regression plane's title (datasets plane and multigauss): the shading is the model's output
// value, not a probability, and no line is drawn. `names`: the colours of [-1, 1]'s ends.
export function regressionTitles(epoch, names, discrete = false) {
  if (discrete) {     // "Discretize output": each place takes its output's sign's full shade
    return [`Epoch ${epoch}: the shading is the sign of the model's output: ${names[1]} at 0 or more, ${names[0]} below`,
            `Epoch ${epoch}: shading = sign of the output`, `Epoch ${epoch}`];
  }
  return [`Epoch ${epoch}: the shading is the model's output value, from \u22121 (${names[0]}) to 1 (${names[1]})`,
          `Epoch ${epoch}: shading = output value`, `Epoch ${epoch}`];
}

// The colour bar's tick labels for its stops 0, 0.25, ... 1: percentages of P(class 1), or
// for regression the output values -1 to 1 the stops stand for.
export function barLabel(p, regression) {
  return regression ? (2 * p - 1).toString().replace("-", "\u2212") : `${Math.round(p * 100)}%`;
}

export function contourSegments(values, rows, cols, level) {
  const segments = [];
  const at = (r, c) => values[r * cols + c];
  const lerp = (a, b) => (level - a) / (b - a);
  for (let r = 0; r < rows - 1; r++) {
    for (let c = 0; c < cols - 1; c++) {
      const v0 = at(r, c), v1 = at(r, c + 1), v2 = at(r + 1, c + 1), v3 = at(r + 1, c);
      const code = (v0 > level ? 1 : 0) | (v1 > level ? 2 : 0) | (v2 > level ? 4 : 0) | (v3 > level ? 8 : 0);
      if (code === 0 || code === 15) continue;
      const bottom = [c + lerp(v0, v1), r], right = [c + 1, r + lerp(v1, v2)];
      const top = [c + lerp(v3, v2), r + 1], left = [c, r + lerp(v0, v3)];
      const centreHigh = (v0 + v1 + v2 + v3) / 4 > level;
      const cases = {
        1: [[left, bottom]], 2: [[bottom, right]], 3: [[left, right]], 4: [[right, top]],
        5: centreHigh ? [[left, top], [bottom, right]] : [[left, bottom], [right, top]],
        6: [[bottom, top]], 7: [[left, top]], 8: [[top, left]], 9: [[top, bottom]],
        10: centreHigh ? [[bottom, left], [top, right]] : [[bottom, right], [top, left]],
        11: [[top, right]], 12: [[right, left]], 13: [[right, bottom]], 14: [[bottom, left]],
      };
      for (const s of cases[code]) segments.push(s);
    }
  }
  return segments;
}

// ---- drawing (the view's canvases) -------------------------------------------------------------
// `limit`: the tallest the canvas may be (presenter mode's room on the first screen), else
// the scene's max_height.
export function drawBoundary(view, width, limit = null) {
  const sc = view.scene, fr = view.frame, s = view.scale;
  const font = FONT_PX * s;
  const [x0, x1, y0, y1] = sc.extent;
  const margin = { left: font * 4.2, right: font * 7.6, top: font * 2.4, bottom: font * 3.6 };
  let plotW = width - margin.left - margin.right;
  let plotH = plotW * (y1 - y0) / (x1 - x0);
  const maxH = (limit ?? sc.max_height) - margin.top - margin.bottom;
  if (plotH > maxH) { plotH = maxH; plotW = plotH * (x1 - x0) / (y1 - y0); }
  const height = plotH + margin.top + margin.bottom;
  view.planeHeight = height;
  const ctx = view.sizeCanvas(view.plane, width, height);
  const left = margin.left + Math.max(0, (width - margin.left - margin.right - plotW) / 2);
  const top = margin.top;
  const px = (x) => left + (x - x0) / (x1 - x0) * plotW;
  const py = (y) => top + (y1 - y) / (y1 - y0) * plotH;
  view.toPlane = { px, py, left, top, plotW, plotH, x0, x1, y0, y1 };

  // Shading: one pixel per grid node, stretched so each node's colour is centred on it.
  const n = sc.resolution;
  const low = hexToRgb(sc.colours.class0_shade), high = hexToRgb(sc.colours.class1_shade);
  // P = 0.5 is the page background in dark mode: a white band would glare on a projector.
  const white = view.dark ? view.background : hexToRgb(sc.colours.middle);
  const base = view.background;
  // The grid is uint8: the colour of each of its 256 values, worked out once per theme.
  const shadeKey = [view.themeKey, view.sceneId, n].join("|");
  if (view.shadeKey !== shadeKey) {
    view.shadeKey = shadeKey;
    view.shades = shadeTable(low, white, high, base, sc.shade_opacity, sc.discretize);
    view.tile = document.createElement("canvas");
    view.tile.width = n; view.tile.height = n;
    view.tileImage = new ImageData(n, n);
  }
  const image = view.tileImage, shades = view.shades;
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      const v = 3 * fr.grid[r * n + c];
      const i = ((n - 1 - r) * n + c) * 4;        // row 0 is the lowest y: the image's bottom
      image.data[i] = shades[v]; image.data[i + 1] = shades[v + 1]; image.data[i + 2] = shades[v + 2];
      image.data[i + 3] = 255;
    }
  }
  const tile = view.tile;
  tile.getContext("2d").putImageData(image, 0, 0);
  const dx = (x1 - x0) / (n - 1), dy = (y1 - y0) / (n - 1);
  ctx.save();
  ctx.beginPath(); ctx.rect(left, top, plotW, plotH); ctx.clip();
  ctx.imageSmoothingEnabled = true;
  ctx.drawImage(tile, px(x0 - dx / 2), py(y1 + dy / 2), px(x1 + dx / 2) - px(x0 - dx / 2),
                py(y0 - dy / 2) - py(y1 + dy / 2));

  // The decision boundary (P = 0.5) and, on request, the best possible one.
  const toXY = ([c, r]) => [px(x0 + c * dx), py(y0 + r * dy)];
  // Regression has no decision boundary: the shading alone shows the output value.
  const boundary = sc.regression ? [] : contourSegments(fr.grid, n, n, 127.5);   // P = 0.5 is 127.5 of 255
  strokeSegments(ctx, boundary.map((seg) => seg.map(toXY)), css(view.text), 3 * s, []);
  if (sc.blobs.bayes) {
    if (view.bayesFor !== view.sceneId) {         // fixed for the scene: traced once
      view.bayesFor = view.sceneId;
      view.bayesSegments = contourSegments(sc.blobs.bayes, n, n, 0);
    }
    strokeSegments(ctx, view.bayesSegments.map((seg) => seg.map(toXY)),
                        sc.colours.bayes, 3 * s, [8 * s, 6 * s]);
  }

  ctx.restore();

  // What does not change from frame to frame (points, axes, colour bar) is drawn once per
  // size, theme and scene into a layer of its own, and laid over each frame's shading.
  const ratio = window.devicePixelRatio || 1;
  const layerKey = [width, height, ratio, view.themeKey, view.sceneId, view.drawRevision].join('|');
  if (view.layerKey !== layerKey) {
    view.layerKey = layerKey;
    view.layer = view.layer || document.createElement('canvas');
    view.layer.width = Math.round(width * ratio); view.layer.height = Math.round(height * ratio);
    const layer = view.layer.getContext('2d');
    layer.setTransform(ratio, 0, 0, ratio, 0, 0);
    view.cutTexts.set(view.layer, []);
    drawStatic(view, layer, { sc, s, font, px, py, left, top, plotW, plotH, margin, x0, x1, y0, y1, low, white, high, base });
  }
  ctx.save();
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.drawImage(view.layer, 0, 0);
  ctx.restore();

  ctx.fillStyle = css(view.text);
  ctx.font = `${font * 1.15}px ${view.font}`;
  ctx.textAlign = "left"; ctx.textBaseline = "middle";
  const titles = fr.plane_title ? [fr.plane_title]
    : sc.regression ? regressionTitles(fr.epoch, sc.colours.class_names, sc.discretize)
      : planeTitles(fr.epoch, boundary.length > 0, fr.grid[0] > 127.5);
  view.label(ctx, view.fitting(ctx, titles, width - left), left, margin.top / 2);

  if (view.cursor && view.cursorShown) drawCursor(view, ctx, s);
}

// The keyboard cursor's cell (access.js), outlined twice (text colour inside the background's)
// so that it shows on any shade.
function drawCursor(view, ctx, s) {
  const t = view.toPlane;
  const [left, right, bottom, top] = cellBounds(view.cursor, view.scene.extent);
  const x = t.px(left), y = t.py(top), w = t.px(right) - x, h = t.py(bottom) - y;
  ctx.save();
  ctx.lineWidth = 4 * s; ctx.strokeStyle = css(view.background); ctx.strokeRect(x, y, w, h);
  ctx.lineWidth = 2 * s; ctx.strokeStyle = css(view.text); ctx.strokeRect(x, y, w, h);
  ctx.restore();
}

function drawStatic(view, ctx, { sc, s, font, px, py, left, top, plotW, plotH, margin, x0, x1, y0, y1, low, white, high, base }) {
  ctx.save();
  ctx.beginPath(); ctx.rect(left, top, plotW, plotH); ctx.clip();
  // The points: the class is the colour and the shape (scene.class_shapes: circles and
  // squares), the split is the fill (train filled, validation open, test open with a dot).
  // Drawn points not split yet (too few, or an edit on its way to the page) are all filled.
  for (const [x, y, cls] of drawnOnly(view) || []) {
    drawMarker(ctx, sc.class_shapes[cls], "filled", px(x), py(y), 3.4 * s, sc.colours.classes[cls],
               sc.colours.outline, s);
  }
  for (const group of drawnOnly(view) ? [] : sc.groups) {
    const xy = sc.blobs[`${group.name}_xy`], labels = sc.blobs[`${group.name}_y`];
    const size = group.size * s;
    for (let i = 0; i < labels.length; i++) {
      const colour = sc.colours.classes[labels[i]];
      drawMarker(ctx, sc.class_shapes[labels[i]], group.fill, px(xy[2 * i]), py(xy[2 * i + 1]), size,
                 colour, sc.colours.outline, s);
    }
  }
  ctx.globalAlpha = 1;
  ctx.restore();

  // Frame, ticks, titles.
  const ink = css(view.text), faint = css(view.text, 0.35);
  ctx.strokeStyle = faint; ctx.lineWidth = s; ctx.strokeRect(left, top, plotW, plotH);
  ctx.fillStyle = ink;
  ctx.font = `${font}px ${view.font}`;
  const xTicks = niceTicks(x0, x1, Math.max(3, Math.floor(plotW / (font * 6))));
  const yTicks = niceTicks(y0, y1, Math.max(3, Math.floor(plotH / (font * 4))));
  const xStep = xTicks[1] - xTicks[0] || 1, yStep = yTicks[1] - yTicks[0] || 1;
  ctx.textAlign = "center"; ctx.textBaseline = "top";
  for (const t of xTicks) {
    ctx.fillRect(px(t) - s / 2, top + plotH, s, font * 0.4);
    view.label(ctx, formatTick(t, xStep), px(t), top + plotH + font * 0.6);
  }
  ctx.textAlign = "right"; ctx.textBaseline = "middle";
  for (const t of yTicks) {
    ctx.fillRect(left - font * 0.4, py(t) - s / 2, font * 0.4, s);
    view.label(ctx, formatTick(t, yStep), left - font * 0.6, py(t));
  }
  ctx.textAlign = "center"; ctx.textBaseline = "bottom";
  view.label(ctx, sc.x_title, left + plotW / 2, top + plotH + margin.bottom - font * 0.3);
  ctx.save();
  ctx.translate(left - margin.left + font * 0.9, top + plotH / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textBaseline = "middle";
  view.label(ctx, sc.y_title, 0, 0);
  ctx.restore();
  // Colour bar.
  const barX = left + plotW + font * 1.2, barW = font * 1.1, barTop = top + plotH * 0.1, barH = plotH * 0.8;
  const gradient = ctx.createLinearGradient(0, barTop + barH, 0, barTop);
  const stops = sc.discretize ? [[0, low], [0.5, low], [0.5, high], [1, high]]
    : [[0, low], [0.5, white], [1, high]];
  for (const [stop, colour] of stops) {
    gradient.addColorStop(stop, css(mix(base, colour, sc.shade_opacity)));
  }
  ctx.fillStyle = gradient; ctx.fillRect(barX, barTop, barW, barH);
  ctx.strokeStyle = faint; ctx.strokeRect(barX, barTop, barW, barH);
  ctx.fillStyle = ink; ctx.font = `${font}px ${view.font}`;
  ctx.textAlign = "left"; ctx.textBaseline = "middle";
  for (const p of [0, 0.25, 0.5, 0.75, 1]) {
    const y = barTop + barH * (1 - p);
    ctx.fillRect(barX + barW, y - s / 2, font * 0.3, s);
    view.label(ctx, barLabel(p, sc.regression), barX + barW + font * 0.45, y);
  }
  ctx.save();
  ctx.translate(barX + barW + font * 4.4, barTop + barH / 2);
  ctx.rotate(Math.PI / 2);
  ctx.textAlign = "center";
  view.label(ctx, sc.regression ? "model output" : "P(class 1)", 0, 0);
  ctx.restore();
}

// One point: `shape` ("circle" or "square", the class) at (x, y), `size` its radius (a square
// of the same area), `fill` ("filled", "open" or "dot", the split).
export function drawMarker(ctx, shape, fill, x, y, size, colour, outline, s) {
  ctx.beginPath();
  if (shape === "square") {
    const half = size * 0.886;      // sqrt(pi) / 2: the circle's area
    ctx.rect(x - half, y - half, 2 * half, 2 * half);
  } else {
    ctx.arc(x, y, size, 0, 2 * Math.PI);
  }
  if (fill === "filled") {
    ctx.globalAlpha = 0.85;
    ctx.fillStyle = colour; ctx.fill();
    ctx.lineWidth = 0.6 * s; ctx.strokeStyle = outline; ctx.stroke();
  } else {
    // Open: a thick ring in the class's colour, edged by the outline so it reads on any shade.
    ctx.globalAlpha = 1;
    ctx.lineWidth = 2.6 * s; ctx.strokeStyle = outline; ctx.stroke();
    ctx.lineWidth = 1.6 * s; ctx.strokeStyle = colour; ctx.stroke();
    if (fill === "dot") {
      ctx.beginPath(); ctx.arc(x, y, 1.1 * s, 0, 2 * Math.PI);
      ctx.fillStyle = colour; ctx.fill();
    }
  }
  ctx.globalAlpha = 1;
}

function strokeSegments(ctx, segments, colour, width, dash) {
  ctx.strokeStyle = colour; ctx.lineWidth = width; ctx.setLineDash(dash); ctx.lineCap = "round";
  ctx.beginPath();
  for (const [[ax, ay], [bx, by]] of segments) { ctx.moveTo(ax, ay); ctx.lineTo(bx, by); }
  ctx.stroke();
  ctx.setLineDash([]);
}

// The drawn points when the plane shows them as drawn rather than split: too few to split (no
// groups), or an edit the page has not drawn yet. Null otherwise.
export function drawnOnly(view) {
  if (!view.drawn || !view.scene.draw) return null;
  return view.drawSent !== null || !view.scene.groups.length ? view.drawn : null;
}

// Every point drawn on the plane, for the keyboard's read-out (access.js's cellReadout): its
// split's label, class, place and the model's P(class 1) (the frame's uint8, 0..1).
export function pointsOf(view) {
  const sc = view.scene, fr = view.frame, points = [];
  const drawn = drawnOnly(view);
  if (drawn) return drawn.map(([x, y, cls]) => ({ label: "drawn", cls, x, y, p: NaN }));
  let offset = 0;
  for (const group of sc.groups) {
    const xy = sc.blobs[`${group.name}_xy`], labels = sc.blobs[`${group.name}_y`];
    const targets = sc.blobs[`${group.name}_t`];     // regression: the target values
    for (let i = 0; i < labels.length; i++) {
      const byte = fr.pointProbability ? fr.pointProbability[offset + i] : NaN;
      points.push({ label: group.label, cls: labels[i], x: xy[2 * i], y: xy[2 * i + 1], p: byte / 255,
                    byte, target: targets ? targets[i] : NaN });
    }
    offset += labels.length;
  }
  return points;
}

// The readout under the pointer: the nearest point, else the model's P at that place.
export function hover(view, event) {
  const t = view.toPlane, sc = view.scene, fr = view.frame;
  if (!t || !sc || !fr) return;
  const box = view.plane.getBoundingClientRect();
  const mx = event.clientX - box.left, my = event.clientY - box.top;
  if (mx < t.left || mx > t.left + t.plotW || my < t.top || my > t.top + t.plotH) {
    view.tooltip.hidden = true;
    return;
  }
  let best = null, bestDistance = (8 * view.scale) ** 2, offset = 0;
  for (const group of sc.groups) {
    const xy = sc.blobs[`${group.name}_xy`], labels = sc.blobs[`${group.name}_y`];
    for (let i = 0; i < labels.length; i++) {
      const d = (t.px(xy[2 * i]) - mx) ** 2 + (t.py(xy[2 * i + 1]) - my) ** 2;
      if (d < bestDistance) { bestDistance = d; best = { group, i, index: offset + i, x: xy[2 * i], y: xy[2 * i + 1], label: labels[i] }; }
    }
    offset += labels.length;
  }
  const f = (v) => v.toFixed(2).replace("-", "\u2212");
  let text;
  if (best) {
    const p = fr.pointProbability ? fr.pointProbability[best.index] / 255 : NaN;
    const targets = sc.blobs[`${best.group.name}_t`];
    text = sc.regression
      ? `${best.group.label} point, target ${f(targets[best.i])}\nx\u2081 = ${f(best.x)}, x\u2082 = ${f(best.y)}\n` +
        `model's output ${outputText(fr.pointProbability[best.index])}`
      : `${best.group.label} point, class ${best.label}\nx\u2081 = ${f(best.x)}, x\u2082 = ${f(best.y)}\n` +
        `model's P(class 1) \u2248 ${(100 * p).toFixed(0)}%`;
  } else {
    const x = t.x0 + (mx - t.left) / t.plotW * (t.x1 - t.x0);
    const y = t.y1 - (my - t.top) / t.plotH * (t.y1 - t.y0);
    const n = sc.resolution;
    const c = Math.round((x - t.x0) / (t.x1 - t.x0) * (n - 1));
    const r = Math.round((y - t.y0) / (t.y1 - t.y0) * (n - 1));
    const p = fr.grid[r * n + c] / 255;
    text = sc.regression ? `x\u2081 = ${f(x)}, x\u2082 = ${f(y)}\nmodel's output ${outputText(fr.grid[r * n + c])}`
      : `x\u2081 = ${f(x)}, x\u2082 = ${f(y)}\nmodel's P(class 1) \u2248 ${(100 * p).toFixed(0)}%`;
  }
  view.tooltip.textContent = text;
  view.tooltip.hidden = false;
  view.tooltip.style.left = `${Math.min(mx + 14, box.width - 200)}px`;
  view.tooltip.style.top = `${my + 14}px`;
}
