// The network view's columns: one group per layer, one button per unit (its map behind it), built
// once per scene; put in their order, folded, and crossed by the arrow keys as one Tab stop (a
// roving tabindex). The functions take the pane (network.js's `NetworkPane`), whose `columns`,
// `order`, `unfolded` and `tabStop` they keep.

import { FOLD, PER_COLUMN, ROVING_KEYS, layerName, rovingTarget, shownUnits, unitName } from "./network_units.js";

// The fold button's text and accessible name for column `layer` of `count` units.
export function foldWords(layer, layers, count, unfolded) {
  const name = layerName(layer, layers);
  return unfolded
    ? { text: `Show the ${FOLD} strongest`, label: `${name}: show only the ${FOLD} units with the strongest outgoing weights` }
    : { text: `Show all ${count} (${count - FOLD} more)`, label: `${name}: show all ${count} units (${count - FOLD} more)` };
}

// One button per unit in each column (built once per scene; `placeUnits` orders and folds them).
export function buildColumns(pane) {
  const sc = pane.scene, points = sc.resolution * sc.resolution;
  pane.stage.querySelectorAll(".layer").forEach((e) => e.remove());
  pane.columns = sc.widths.map((width, layer) => {
    const column = document.createElement("div");
    column.className = "layer";
    column.setAttribute("role", "group");
    column.setAttribute("aria-label", `${layerName(layer, pane.layers)}, ${width} unit${width === 1 ? "" : "s"}`);
    const heading = document.createElement("div");
    heading.className = "layer-name";
    heading.setAttribute("aria-hidden", "true");    // the group's name says it
    heading.textContent = layer === 0 || layer === pane.layers - 1 ? layerName(layer, pane.layers)
      : `hidden ${layer} (${width})`;
    const units = document.createElement("div");
    units.className = "units";
    column.append(heading, units);
    const buttons = [...Array(width).keys()].map((unit) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "unit";
      button.dataset.layer = String(layer);
      button.dataset.unit = String(unit);
      // The output shows the boundary's picture on a canvas of its own, redrawn with every frame;
      // the other units' maps are drawn on the stage's one canvas behind their buttons, which
      // the browser then composites once instead of once per unit.
      const map = document.createElement(layer === pane.layers - 1 ? "canvas" : "span");
      map.className = "map";
      if (layer === pane.layers - 1) map.width = map.height = pane.view.scene.resolution;
      map.setAttribute("aria-hidden", "true");
      button.append(map);
      button.setAttribute("aria-label", unitName(layer, unit, pane.layers, sc.input_names));
      return button;
    });
    // The inputs are named beside their maps, as in TensorFlow Playground (their buttons'
    // names say it to a screen reader: the labels are hidden from it).
    const labels = layer === 0 ? sc.input_names.map((text) => {
      const label = document.createElement("span");
      label.className = "input-name";
      label.setAttribute("aria-hidden", "true");
      label.textContent = text;
      return label;
    }) : null;
    if (labels) units.classList.add("inputs");
    let more = null;
    if (width > FOLD + 1) {
      more = document.createElement("button");
      more.type = "button";
      more.className = "more";
      more.dataset.layer = String(layer);
      column.append(more);
    }
    pane.stage.append(column);
    return { column, units, buttons, labels, more };
  });
  pane.images = pane.columns.map((c, layer) => {
    const side = layer === pane.layers - 1 ? pane.view.scene.resolution : sc.resolution;
    return new ImageData(side, side);
  });
  pane.points = points;
  pane.labelledAt = null;
  placeUnits(pane);
}

// Put each column's units in their order, hide the folded ones, name the fold's button.
export function placeUnits(pane) {
  if (!pane.columns || !pane.order) return;
  pane.columns.forEach(({ units, buttons, labels, more }, layer) => {
    const order = pane.order[layer], unfolded = pane.unfolded.has(layer);
    const shown = new Set(shownUnits(order, unfolded));
    units.classList.toggle("unfolded", unfolded && order.length > FOLD + 1);
    units.style.setProperty("--rows", String(Math.min(PER_COLUMN, order.length)));
    units.replaceChildren(...order.flatMap((unit) => (labels ? [labels[unit], buttons[unit]] : [buttons[unit]])));
    for (const unit of order) buttons[unit].hidden = !shown.has(unit);
    if (more) {
      const words = foldWords(layer, pane.layers, order.length, unfolded);
      more.textContent = words.text;
      more.setAttribute("aria-expanded", String(unfolded));
      more.setAttribute("aria-label", words.label);
    }
  });
  rove(pane);
  pane.layoutKey = null;          // the edges follow the units
  pane.dirty = true;
}

// The units each column shows, in their order on screen.
export function shownButtons(pane) {
  return pane.columns.map(({ buttons }, layer) => pane.order[layer].map((u) => buttons[u]).filter((b) => !b.hidden));
}

// Make `button` (or, when it is folded away or gone, the first input) the network's one Tab stop.
export function rove(pane, button = pane.tabStop) {
  const all = pane.columns.flatMap((c) => c.buttons);
  const stop = button && all.includes(button) && !button.hidden ? button : shownButtons(pane)[0][0];
  for (const b of all) b.tabIndex = b === stop ? 0 : -1;
  pane.tabStop = stop;
}

// An arrow key, Home or End on a unit: focus the unit it leads to (rovingTarget).
export function roam(pane, event) {
  const from = event.target.closest && event.target.closest("button.unit");
  if (!from || !ROVING_KEYS.includes(event.key) || event.altKey || event.ctrlKey || event.metaKey) return;
  const shown = shownButtons(pane);
  const layer = Number(from.dataset.layer);
  const target = rovingTarget(event.key, layer, shown[layer].indexOf(from), shown.map((c) => c.length));
  event.preventDefault();
  const button = shown[target[0]][target[1]];
  rove(pane, button);
  button.focus();
}

export function toggleFold(pane, layer) {
  if (pane.unfolded.has(layer)) pane.unfolded.delete(layer); else pane.unfolded.add(layer);
  placeUnits(pane);
  pane.draw();
}
