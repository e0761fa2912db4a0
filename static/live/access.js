// The moons trainer's live view in words: what a screen reader announces while a run plays, the
// canvases' names, the keyboard cursor over the plane and its read-out, and the pace of a
// playing run's pictures under reduced motion.
//
// Pure: no DOM. The view's parts (announce.js, cursor.js, frames.js) decide when to call these
// and write what they return into the page; tests/js/access.test.mjs tests them.

export const ANNOUNCE_EVERY = 10;      // epochs between two progress announcements while a run plays
// While a run plays, the canvases' names change at most every LABEL_MS: the numbers a screen
// reader reads are at most two seconds old, and the accessibility tree does not churn.
export const LABEL_MS = 2000;
// With reduced motion, a playing run's picture changes at most every REDUCED_MOTION_MS: a
// sequence of still pictures, where ten to fifteen a second read as an animation.
export const REDUCED_MOTION_MS = 2000;
export const CURSOR_CELLS = 16;        // the keyboard cursor's grid over the plane: cells per side
export const CURSOR_JUMP = 4;          // cells a Shift+arrow moves

// Words for how a split's points are filled (the scene's group.fill, drawn by plane.js).
export const FILL_WORDS = { filled: "filled", open: "open", dot: "open with a dot" };

export const lossText = (v) => (Number.isFinite(v) ? v.toFixed(3) : "not a number");
export const percentText = (v) => (Number.isFinite(v) ? `${(100 * v).toFixed(1)}%` : "not a number");

// The last epoch of the view's history ({epoch, train_loss, val_loss, train_acc, val_acc}), or
// null before the first epoch.
export function latest(history) {
  const i = history.epoch.length - 1;
  if (i < 0) return null;
  const out = {};
  for (const name of Object.keys(history)) out[name] = history[name][i];
  return out;
}

// `regression` (datasets plane and multigauss): the loss is the MSE, and the accuracy's place
// in the history holds R².
export function metricsText(m, regression = false) {
  if (regression) {
    return `MSE ${lossText(m.train_loss)} train, ${lossText(m.val_loss)} validation; ` +
           `R\u00b2 ${r2Text(m.train_acc)} train, ${r2Text(m.val_acc)} validation`;
  }
  return `loss ${lossText(m.train_loss)} train, ${lossText(m.val_loss)} validation; ` +
         `accuracy ${percentText(m.train_acc)} train, ${percentText(m.val_acc)} validation`;
}

// R² as the page writes it: three decimals, a real minus sign.
export function r2Text(v) {
  return Number.isFinite(v) ? v.toFixed(3).replace("-", "\u2212") : "undefined";
}

// Regression: the frame's uint8 carries (clip(v, -1, 1) + 1) / 2 of the model's output v.
export function outputValue(byte) {
  return byte / 255 * 2 - 1;
}

// A regression output read from the frame's uint8, in words: at the ends the value was clipped.
export function outputText(byte) {
  if (byte >= 255) return "1 or more";
  if (byte <= 0) return "\u22121 or less";
  return `\u2248 ${outputValue(byte).toFixed(2).replace("-", "\u2212")}`;
}

// The lowest and highest output over the grid, clipped to [-1, 1]: [low, high].
export function outputRange(grid) {
  let lo = 255, hi = 0;
  for (const v of grid) { if (v < lo) lo = v; if (v > hi) hi = v; }
  return grid.length ? [outputValue(lo), outputValue(hi)] : [NaN, NaN];
}

// "Epoch 20 of 100: loss ... ; accuracy ...", from the frame and the latest epoch's numbers.
export function progressText(epoch, epochs, metrics, regression = false) {
  return `Epoch ${epoch} of ${epochs}${metrics ? `: ${metricsText(metrics, regression)}` : ""}.`;
}

// What to announce for a new frame, and what to remember of it. `memory` is what the last call
// returned (null before the view's first frame); `now` is {epoch, epochs, playing, endNote,
// metrics}. Polite and sparse: a run that plays says where it is each time it passes a multiple
// of ANNOUNCE_EVERY epochs, a pause says where it stopped, and the end says why and what to do
// next (endNote, from the page). The page as it opens says nothing: its status line is there to read.
export function announcement(memory, now) {
  const next = { epoch: now.epoch, playing: now.playing, endNote: now.endNote || "" };
  if (memory === null) return { text: null, memory: next };
  const progress = progressText(now.epoch, now.epochs, now.metrics, !!now.regression);
  let text = null;
  if (next.endNote && next.endNote !== memory.endNote) {
    text = `${progress} ${next.endNote}`;
  } else if (memory.playing && !now.playing) {
    text = `Paused at e${progress.slice(1)}`;
  } else if (memory.playing && now.playing &&
             Math.floor(now.epoch / ANNOUNCE_EVERY) > Math.floor(memory.epoch / ANNOUNCE_EVERY)) {
    text = progress;
  }
  return { text, memory: next };
}

// Whether the canvases' names may change now (`lastAt`: when they last did, null for never).
// Names that change with every frame would make the accessibility tree churn and some screen
// readers re-read a focused element: while a run plays, once every LABEL_MS; otherwise at once.
export function relabelNow(lastAt, now, playing) {
  return !playing || lastAt === null || now - lastAt >= LABEL_MS;
}

// How long to wait before drawing a frame (0: now). With reduced motion a playing run's
// picture changes in steps at least REDUCED_MOTION_MS apart instead of ten to fifteen times a
// second; a frame that is not a playing run's (a pause, the end, the page's own) is drawn at once.
export function drawDelay(lastDrawnAt, now, reduced, playing) {
  if (!reduced || !playing || lastDrawnAt === null) return 0;
  return Math.max(0, REDUCED_MOTION_MS - (now - lastDrawnAt));
}

// The plane's accessible name.
export function planeLabel(epoch, epochs, metrics, classOneShare) {
  const accuracy = metrics ? `, validation accuracy ${percentText(metrics.val_acc)}` : "";
  const side = classOneShare === 0 ? "class 0 everywhere on the plane (no decision boundary)"
    : classOneShare === 1 ? "class 1 everywhere on the plane (no decision boundary)"
      : `class 1 on ${Math.round(100 * classOneShare)}% of the plane and class 0 on the rest`;
  return `Decision boundary at epoch ${epoch} of ${epochs}${accuracy}: the model predicts ${side}.`;
}

// A regression plane's accessible name: the output's range over the plane, no boundary.
export function regressionPlaneLabel(epoch, epochs, metrics, grid) {
  const r2 = metrics ? `, validation R\u00b2 ${r2Text(metrics.val_acc)}` : "";
  const [lo, hi] = outputRange(grid);
  const f = (v) => v.toFixed(2).replace("-", "\u2212");
  return `Model output value at epoch ${epoch} of ${epochs}${r2}: over the plane it runs from ` +
         `${f(lo)} to ${f(hi)} (shown clipped to \u22121 to 1).`;
}

// The share of the grid's nodes where P > 0.5 (the uint8 grid: 255 is P = 1).
export function classOneShare(grid) {
  let above = 0;
  for (const v of grid) if (v > 127.5) above += 1;
  return grid.length ? above / grid.length : 0;
}

// The plane's description: the points (how many of each class, per split, and how they look)
// and how to read them by keyboard. Changes with the scene only.
// `classShapes` and `colourNames`: [class 0, class 1], from the scene.
export function planeDescription(groups, labelsOf, classShapes, colourNames) {
  const splits = groups.map((g) => {
    const labels = labelsOf(g.name);
    let ones = 0;
    for (const v of labels) ones += v;
    return `${g.label} (${FILL_WORDS[g.fill] || g.fill}): ${labels.length - ones} of class 0, ${ones} of class 1`;
  });
  return `Points: ${splits.join("; ")}. Class 0 is drawn as ${colourNames[0]} ${classShapes[0]}s, ` +
         `class 1 as ${colourNames[1]} ${classShapes[1]}s. Arrow keys move a cursor over the plane and read out the ` +
         `model's probability there and the points under it; Shift with an arrow moves ` +
         `${CURSOR_JUMP} cells, Home and End go to the left and right edges.`;
}

// A regression plane's description: per split, how many points have a target at or above 0
// and below it, and how they look. `labelsOf(name)`: 1 where the target is >= 0.
export function regressionDescription(groups, labelsOf, classShapes, colourNames) {
  const splits = groups.map((g) => {
    const labels = labelsOf(g.name);
    let ones = 0;
    for (const v of labels) ones += v;
    return `${g.label} (${FILL_WORDS[g.fill] || g.fill}): ${ones} with a target of 0 or more, ` +
           `${labels.length - ones} below 0`;
  });
  return `Regression points: ${splits.join("; ")}. Points with a target below 0 are drawn as ${colourNames[0]} ` +
         `${classShapes[0]}s, 0 or more as ${colourNames[1]} ${classShapes[1]}s. Arrow keys move a cursor ` +
         `over the plane and read out the model's output value there and the points under it; Shift ` +
         `with an arrow moves ${CURSOR_JUMP} cells, Home and End go to the left and right edges.`;
}

// The two curve canvases' accessible names: [loss, accuracy].
// `bayesAccuracy` null: unknown (drawn points). `regression`: MSE and R², and `bayesAccuracy`
// holds the best possible predictor's test R².
export function curveLabels(metrics, bayesAccuracy, regression = false) {
  if (regression) {
    const none = `; best possible test R\u00b2 ${bayesAccuracy == null ? "unknown" : r2Text(bayesAccuracy)}`;
    if (!metrics) return ["MSE loss per epoch: no epoch trained yet", `R\u00b2 per epoch: no epoch trained yet${none}`];
    return [`MSE loss per epoch, at epoch ${metrics.epoch}: train ${lossText(metrics.train_loss)}, ` +
            `validation ${lossText(metrics.val_loss)}`,
            `R\u00b2 per epoch, at epoch ${metrics.epoch}: train ${r2Text(metrics.train_acc)}, ` +
            `validation ${r2Text(metrics.val_acc)}${none}`];
  }
  const best = `; best possible test accuracy ${bayesAccuracy == null ? "unknown" : percentText(bayesAccuracy)}`;
  if (!metrics) return ["Loss per epoch: no epoch trained yet", `Accuracy per epoch: no epoch trained yet${best}`];
  return [`Loss per epoch, at epoch ${metrics.epoch}: train ${lossText(metrics.train_loss)}, ` +
          `validation ${lossText(metrics.val_loss)}`,
          `Accuracy per epoch, at epoch ${metrics.epoch}: train ${percentText(metrics.train_acc)}, ` +
          `validation ${percentText(metrics.val_acc)}${best}`];
}

// ---- the keyboard cursor: a CURSOR_CELLS by CURSOR_CELLS grid over the plane, row 0 at the bottom

export const startCursor = (cells = CURSOR_CELLS) => ({ col: Math.floor(cells / 2), row: Math.floor(cells / 2) });

// Where a key moves the cursor, or null for a key the plane leaves to the page (Tab, shortcuts).
export function moveCursor(cursor, key, shift, cells = CURSOR_CELLS) {
  const step = shift ? CURSOR_JUMP : 1;
  const clamp = (v) => Math.min(cells - 1, Math.max(0, v));
  switch (key) {
    case "ArrowLeft": return { col: clamp(cursor.col - step), row: cursor.row };
    case "ArrowRight": return { col: clamp(cursor.col + step), row: cursor.row };
    case "ArrowUp": return { col: cursor.col, row: clamp(cursor.row + step) };
    case "ArrowDown": return { col: cursor.col, row: clamp(cursor.row - step) };
    case "Home": return { col: 0, row: cursor.row };
    case "End": return { col: cells - 1, row: cursor.row };
    default: return null;
  }
}

// The cell (col, row) a place on the plane is in; extent is [x0, x1, y0, y1].
export function cellOf(x, y, extent, cells = CURSOR_CELLS) {
  const [x0, x1, y0, y1] = extent;
  const clamp = (v) => Math.min(cells - 1, Math.max(0, v));
  return { col: clamp(Math.floor((x - x0) / (x1 - x0) * cells)), row: clamp(Math.floor((y - y0) / (y1 - y0) * cells)) };
}

// The cell's bounds on the plane: [left x, right x, bottom y, top y].
export function cellBounds(cursor, extent, cells = CURSOR_CELLS) {
  const [x0, x1, y0, y1] = extent;
  const w = (x1 - x0) / cells, h = (y1 - y0) / cells;
  return [x0 + cursor.col * w, x0 + (cursor.col + 1) * w, y0 + cursor.row * h, y0 + (cursor.row + 1) * h];
}

const coordinate = (v) => v.toFixed(2).replace("-", "\u2212");
const MAX_LISTED = 4;     // points named one by one in a cell; the rest are counted

// The read-out at the cursor, as lines: where it is, the model's P at the cell's centre (the
// nearest node of the uint8 grid, `resolution` nodes a side), and the points in the cell.
// `points` is [{label, cls, x, y, p}] (p: the model's P(class 1) for the point, 0..1).
export function cellReadout(cursor, extent, grid, resolution, points, cells = CURSOR_CELLS, regression = false) {
  const [x0, x1, y0, y1] = extent;
  const [left, right, bottom, top] = cellBounds(cursor, extent, cells);
  const x = (left + right) / 2, y = (bottom + top) / 2;
  const c = Math.round((x - x0) / (x1 - x0) * (resolution - 1));
  const r = Math.round((y - y0) / (y1 - y0) * (resolution - 1));
  const p = grid[r * resolution + c] / 255;
  if (regression) return regressionReadout(cursor, cells, x, y, grid[r * resolution + c], points, extent);
  const inside = points.filter((q) => {
    const cell = cellOf(q.x, q.y, extent, cells);
    return cell.col === cursor.col && cell.row === cursor.row;
  });
  const lines = [
    `x\u2081 = ${coordinate(x)}, x\u2082 = ${coordinate(y)} (column ${cursor.col + 1} of ${cells}, row ${cursor.row + 1} from the bottom)`,
    `model's P(class 1) \u2248 ${(100 * p).toFixed(0)}%: class ${p > 0.5 ? 1 : 0} side`,
  ];
  if (!inside.length) {
    lines.push("no points here");
  } else {
    const named = inside.slice(0, MAX_LISTED).map(
      (q) => `${q.label} class ${q.cls}${Number.isFinite(q.p) ? ` (P \u2248 ${(100 * q.p).toFixed(0)}%)` : ""}`);
    const more = inside.length > MAX_LISTED ? `, and ${inside.length - MAX_LISTED} more` : "";
    const ones = inside.filter((q) => q.cls === 1).length;
    const split = inside.length > 1 ? `, ${inside.length - ones} of class 0 and ${ones} of class 1` : "";
    lines.push(`${inside.length} point${inside.length === 1 ? "" : "s"} here${split}: ${named.join(", ")}${more}`);
  }
  return lines;
}

// The cursor's read-out on a regression plane: the model's output value there and the points'
// targets (`points`: plane.js's pointsOf, each with its `target` and the output's uint8 `byte`).
function regressionReadout(cursor, cells, x, y, byte, points, extent) {
  const inside = points.filter((q) => {
    const cell = cellOf(q.x, q.y, extent, cells);
    return cell.col === cursor.col && cell.row === cursor.row;
  });
  const f = (v) => v.toFixed(2).replace("-", "\u2212");
  const lines = [
    `x\u2081 = ${coordinate(x)}, x\u2082 = ${coordinate(y)} (column ${cursor.col + 1} of ${cells}, row ${cursor.row + 1} from the bottom)`,
    `model's output ${outputText(byte)}`,
  ];
  if (!inside.length) {
    lines.push("no points here");
  } else {
    const named = inside.slice(0, MAX_LISTED).map(
      (q) => `${q.label} target ${f(q.target)}${Number.isFinite(q.byte) ? ` (output ${outputText(q.byte)})` : ""}`);
    const more = inside.length > MAX_LISTED ? `, and ${inside.length - MAX_LISTED} more` : "";
    lines.push(`${inside.length} point${inside.length === 1 ? "" : "s"} here: ${named.join(", ")}${more}`);
  }
  return lines;
}
