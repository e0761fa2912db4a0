// The moons trainer's live view: the loss and accuracy curves. The drawing functions take the
// view (view.js), whose history, frame and canvases they draw.

import { FONT_PX, css } from "./plane.js";
import { formatTick, niceTicks } from "./ticks.js";

export const CURVE_FIELDS = ["train_loss", "val_loss", "train_acc", "val_acc"];
export const PINNED_ALPHA = 0.5;   // a pinned run's curves: the text colour, half transparent

// What of the pinned run's curves the drawing depends on (its name and epochs), "" without one.
export function pinnedKey(pinned) {
  return pinned ? `${pinned.label}:${pinned.now_label}:${pinned.history.epoch.length}` : "";
}

// The pinned run's last epoch in words, added to the curves' names for a screen reader.
export function pinnedWords(pinned) {
  const h = pinned && pinned.history;
  if (!h || !h.epoch.length) return { loss: "", accuracy: "" };
  const i = h.epoch.length - 1, at = `; ${pinned.label}, at epoch ${h.epoch[i]}: `;
  const percent = (v) => `${(100 * v).toFixed(1)}%`;
  return { loss: `${at}train ${h.train_loss[i].toFixed(3)}, validation ${h.val_loss[i].toFixed(3)}`,
           accuracy: `${at}train ${percent(h.train_acc[i])}, validation ${percent(h.val_acc[i])}` };
}

// The values of `fields` in this run's history and the pinned run's, for the axes' ranges.
export function curveValues(history, pinned, fields) {
  const runs = pinned ? [history, pinned.history] : [history];
  return runs.flatMap((h) => fields.flatMap((f) => h[f])).filter(Number.isFinite);
}

// ---- drawing (the view's two curve canvases) -------------------------------------------------
// `columnHeight`: beside the plane, the two panels share this height; below it (null), each
// is 230 px (times the scale) tall.
export function drawCurves(view, width, columnHeight) {
  const sc = view.scene, s = view.scale, fr = view.frame;
  const h = view.history;
  const each = columnHeight ? Math.max(120, (columnHeight - 8) / 2) : 230 * s;
  const panels = columnHeight ? [[view.lossCanvas, width, each], [view.accuracyCanvas, width, each]]
                             : [[view.lossCanvas, width / 2 - 6, each], [view.accuracyCanvas, width / 2 - 6, each]];
  const pinned = view.pinned;
  const pinnedEpochs = pinned && pinned.history.epoch.length ? pinned.history.epoch[pinned.history.epoch.length - 1] : 0;
  const epochs = Math.max(fr.epochs, h.epoch.length ? h.epoch[h.epoch.length - 1] : 0, pinnedEpochs, 1);
  const loss = curveValues(h, pinned, ["train_loss", "val_loss"]);
  const lowAccuracy = Math.min(0.5, ...curveValues(h, pinned, ["train_acc", "val_acc"]));
  // Regression: the loss is the MSE and the accuracy's place holds R²; its ceiling is the best
  // possible predictor's test R² (E[target | x] of the known process, computed on the server).
  const panelSpecs = sc.regression ? [
    { title: "Loss (MSE)", fields: ["train_loss", "val_loss"], lo: 0,
      hi: Math.max(0.1, ...loss) * 1.05, percent: false },
    { title: "R\u00b2", fields: ["train_acc", "val_acc"], hi: 1.005, percent: false,
      ceiling: Number.isFinite(sc.best_r2) ? sc.best_r2 : undefined,
      lo: Math.min(0, ...curveValues(h, pinned, ["train_acc", "val_acc"]).map((v) => Math.max(v, -1))) - 0.02 },
  ] : [
    { title: "Loss (BCE)", fields: ["train_loss", "val_loss"], lo: 0,
      hi: Math.max(0.1, ...loss) * 1.05, percent: false },
    { title: "Accuracy", fields: ["train_acc", "val_acc"], lo: lowAccuracy - 0.02, hi: 1.005,
      percent: true, ceiling: Number.isFinite(sc.bayes_accuracy) ? sc.bayes_accuracy : undefined },
  ];
  panels.forEach(([canvas, w, hgt], k) => drawPanel(view, canvas, w, hgt, panelSpecs[k], epochs));
}

function drawPanel(view, canvas, width, height, spec, epochs) {
  const s = view.scale, font = FONT_PX * s, sc = view.scene, h = view.history;
  const ctx = view.sizeCanvas(canvas, width, height);
  const m = { left: font * 3.6, right: font * 0.8, top: font * 1.8, bottom: font * 2.8 };
  const w = width - m.left - m.right, hh = height - m.top - m.bottom;
  const px = (e) => m.left + e / epochs * w;
  const py = (v) => m.top + (spec.hi - v) / (spec.hi - spec.lo) * hh;
  const ink = css(view.text), faint = css(view.text, 0.15);
  ctx.font = `${font}px ${view.font}`;
  ctx.fillStyle = ink;
  ctx.textAlign = "left"; ctx.textBaseline = "middle";
  view.label(ctx, spec.title, m.left, m.top / 2);
  const yTicks = niceTicks(spec.lo, spec.hi, Math.max(2, Math.floor(hh / (font * 2.5))));
  const yStep = yTicks[1] - yTicks[0] || 1;
  ctx.textAlign = "right";
  for (const t of yTicks) {
    ctx.fillStyle = faint; ctx.fillRect(m.left, py(t), w, s);
    ctx.fillStyle = ink;
    view.label(ctx, spec.percent ? `${(100 * t).toFixed(yStep < 0.01 ? 1 : 0)}%` : formatTick(t, yStep),
                 m.left - font * 0.4, py(t));
  }
  const xTicks = niceTicks(0, epochs, Math.max(2, Math.floor(w / (font * 4))));
  const xStep = xTicks[1] - xTicks[0] || 1;
  ctx.textAlign = "center"; ctx.textBaseline = "top";
  for (const t of xTicks) view.label(ctx, formatTick(t, Math.max(xStep, 1)), px(t), m.top + hh + font * 0.4);
  ctx.textBaseline = "bottom";
  view.label(ctx, "epoch", m.left + w / 2, height - font * 0.1);
  ctx.save();
  ctx.beginPath(); ctx.rect(m.left, m.top, w, hh); ctx.clip();
  for (const change of view.frame.changes) {      // where a setting changed mid-run
    ctx.strokeStyle = css(view.text, 0.55); ctx.lineWidth = 1.2 * s; ctx.setLineDash([3 * s, 3 * s]);
    ctx.beginPath(); ctx.moveTo(px(change.epoch), m.top); ctx.lineTo(px(change.epoch), m.top + hh); ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = ink; ctx.textAlign = "left"; ctx.textBaseline = "top";
    ctx.fillText(change.short, px(change.epoch) + 3 * s, m.top + 2 * s);
  }
  if (Number.isFinite(view.frame.replay_epoch)) {     // the replayed epoch: a solid line, named
    const x = px(view.frame.replay_epoch);
    ctx.strokeStyle = ink; ctx.lineWidth = 2 * s;
    ctx.beginPath(); ctx.moveTo(x, m.top); ctx.lineTo(x, m.top + hh); ctx.stroke();
    ctx.fillStyle = ink; ctx.textAlign = x > m.left + w / 2 ? "right" : "left"; ctx.textBaseline = "bottom";
    ctx.fillText(`replay: epoch ${view.frame.replay_epoch}`, x + (x > m.left + w / 2 ? -4 : 4) * s, m.top + hh - 2 * s);
  }
  if (spec.ceiling !== undefined) {
    ctx.strokeStyle = sc.colours.bayes; ctx.lineWidth = 2 * s; ctx.setLineDash([2 * s, 3 * s]);
    ctx.beginPath(); ctx.moveTo(px(0), py(spec.ceiling)); ctx.lineTo(px(epochs), py(spec.ceiling)); ctx.stroke();
    ctx.setLineDash([]);
  }
  const line = (history, field, colour, dash, width) => {
    ctx.strokeStyle = colour; ctx.lineWidth = width;
    ctx.setLineDash(dash);
    ctx.beginPath();
    history[field].forEach((v, i) => {
      const x = px(history.epoch[i]), y = py(Math.min(Math.max(v, spec.lo - 1), spec.hi + 1));
      if (i === 0 || history.epoch[i] !== history.epoch[i - 1] + 1) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    });
    if (history[field].length === 1) {
      ctx.arc(px(history.epoch[0]), py(history[field][0]), 2 * s, 0, 2 * Math.PI);
    }
    ctx.stroke();
  };
  // A pinned run's curves first, in grey under this run's: the same dashes name the split.
  if (view.pinned) {
    spec.fields.forEach((field, k) => line(view.pinned.history, field, css(view.text, PINNED_ALPHA),
                                           k ? [6 * s, 4 * s] : [], 1.5 * s));
  }
  spec.fields.forEach((field, k) => line(h, field, sc.colours.curves[k], k ? [6 * s, 4 * s] : [], 2 * s));
  ctx.setLineDash([]);
  ctx.restore();
  ctx.strokeStyle = css(view.text, 0.35); ctx.lineWidth = s; ctx.strokeRect(m.left, m.top, w, hh);
}
