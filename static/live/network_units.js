// The network view's units, as numbers and words: the frame's uint8 arrays decoded into weights,
// biases and the units' maps (workbench/moons_trainer/network.py quantises them on the server), the
// units' order and fold, the arrow keys' way through them, and their names and read-outs (a
// screen reader reads the network as a list of units, each with its bias and strongest weights).
//
// Pure: no DOM (tests/js/network_units.test.mjs). network.js's `NetworkPane` shows them.

export const FOLD = 12;               // units a wide layer shows before "Show all"
export const PER_COLUMN = 16;         // units per column of an unfolded layer
export const LISTED_WEIGHTS = 3;      // incoming weights in a unit's accessible name
export const TIP_WEIGHTS = 8;         // ... and in its tooltip

const number = (v) => (Object.is(v, -0) ? 0 : v).toFixed(2).replace("-", "\u2212");
const signed = (v) => (v > 0 ? "+" : "") + number(v);

// ---- decoding --------------------------------------------------------------------------------

// Each Linear layer's weights, row-major (out, in), from the frame's uint8 codes: code q is
// (q - zero) / zero * scale (workbench/moons_trainer/network.py quantised_weights).
export function decodeWeights(codes, widths, scales, zero) {
  const layers = [];
  let offset = 0;
  for (let l = 0; l + 1 < widths.length; l++) {
    const count = widths[l] * widths[l + 1];
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = (codes[offset + i] - zero) / zero * scales[l];
    layers.push(out);
    offset += count;
  }
  return layers;
}

// Each Linear layer's biases, from the frame's float32 array of all of them.
export function splitBiases(biases, widths) {
  const layers = [];
  let offset = 0;
  for (let l = 1; l < widths.length; l++) {
    layers.push(biases.subarray(offset, offset + widths[l]));
    offset += widths[l];
  }
  return layers;
}

// The value a unit's map holds at grid point `point` (row * resolution + column): `codes` is
// every unit's uint8 map one after the other, `range` every unit's low then every unit's high
// (workbench/moons_trainer/network.py quantised_maps); `unit` counts across the hidden layers.
export function unitValue(codes, range, units, unit, point, points) {
  const low = range[unit], high = range[units + unit];
  return low + codes[unit * points + point] / 255 * (high - low);
}

// A layer's units, most important first: by the sum of |weight| on their outgoing edges (how
// much the next layer listens to each), ties by index. `outgoing` is the next Linear's weights,
// row-major (next width, width).
export function unitOrder(outgoing, width, nextWidth) {
  const strength = new Float64Array(width);
  for (let o = 0; o < nextWidth; o++) {
    for (let i = 0; i < width; i++) strength[i] += Math.abs(outgoing[o * width + i]);
  }
  return [...Array(width).keys()].sort((a, b) => strength[b] - strength[a] || a - b);
}

// The units a layer shows: all of a narrow one, the first FOLD of `order` of a wide one until
// it is unfolded.
export function shownUnits(order, unfolded, fold = FOLD) {
  return unfolded || order.length <= fold + 1 ? order : order.slice(0, fold);
}

// ---- keyboard --------------------------------------------------------------------------------

// The network is one stop in the page's Tab order (a roving tabindex, as WAI-ARIA's grid pattern
// has it): 100 units would otherwise take 100 presses of Tab to cross. The arrow keys move within
// it: up and down along a column, left and right to the unit at the same height in the next
// column (or its last), Home and End to a column's first and last. `shown` counts the units each
// column shows; the result is the [column, position] to focus, or null for a key it leaves alone.
export const ROVING_KEYS = ["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End"];

export function rovingTarget(key, layer, position, shown) {
  const last = (l) => shown[l] - 1;
  switch (key) {
    case "ArrowUp": return [layer, Math.max(0, position - 1)];
    case "ArrowDown": return [layer, Math.min(last(layer), position + 1)];
    case "ArrowLeft":
      return layer === 0 ? [layer, position] : [layer - 1, Math.min(position, last(layer - 1))];
    case "ArrowRight":
      return layer === shown.length - 1 ? [layer, position]
        : [layer + 1, Math.min(position, last(layer + 1))];
    case "Home": return [layer, 0];
    case "End": return [layer, last(layer)];
    default: return null;
  }
}

// ---- names -----------------------------------------------------------------------------------

// The column `layer` (0 inputs, 1.. hidden, last the output) in words.
export function layerName(layer, layers) {
  if (layer === 0) return "inputs";
  if (layer === layers - 1) return "output";
  return `hidden layer ${layer}`;
}

// A unit's name: "input x₁", "hidden layer 1, unit 3" (units count from 1), "output".
export function unitName(layer, unit, layers, inputNames) {
  if (layer === 0) return `input ${inputNames[unit]}`;
  if (layer === layers - 1) return "output";
  return `hidden layer ${layer}, unit ${unit + 1}`;
}

// Where an edge into layer `layer` comes from, in words: "x₁", "unit 5" (of the layer before).
export function sourceName(layer, unit, inputNames) {
  return layer === 1 ? inputNames[unit] : `unit ${unit + 1}`;
}

// The `count` strongest incoming weights of unit `unit` in layer `layer` (>= 1):
// [{from, weight}], by |weight|, ties by index. `weights` is the Linear into that layer.
export function strongestWeights(weights, width, unit, count) {
  const row = [...Array(width).keys()].map((from) => ({ from, weight: weights[unit * width + from] }));
  row.sort((a, b) => Math.abs(b.weight) - Math.abs(a.weight) || a.from - b.from);
  return row.slice(0, count);
}

// A unit's accessible name (and its tooltip, with `listed` = TIP_WEIGHTS and `lines`): its name,
// bias, strongest incoming weights and its activation's range over the plane. An input unit has
// no bias nor weights: it is a coordinate itself, or a feature computed from them (`inputWords`,
// the server's words for each input).
export function unitText({ layer, unit, layers, inputNames, inputWords, weights, width, bias, low, high, activation, regression },
                         listed = LISTED_WEIGHTS, lines = false) {
  const name = unitName(layer, unit, layers, inputNames);
  if (layer === 0) {
    const what = inputWords ? inputWords[unit] : `the coordinate ${inputNames[unit]}, standardised`;
    const parts = [name, `${what}, from ${number(low)} to ${number(high)} over the plane`];
    return lines ? parts.join("\n") : `${parts.join(": ")}.`;
  }
  const strongest = strongestWeights(weights, width, unit, listed);
  const from = layer === 1 ? "from" : `from hidden layer ${layer - 1},`;
  const list = strongest.map((w) => `${sourceName(layer, w.from, inputNames)} ${signed(w.weight)}`).join(", ");
  const which = width > listed ? `strongest ${strongest.length} of ${width} incoming weights` : "incoming weights";
  const what = layer === layers - 1
    ? (regression ? "the output value over the plane, as the plane shades it" : "P(class 1) over the plane, as the boundary")
    : `${activation} output from ${number(low)} to ${number(high)} over the plane`;
  const parts = [name, `bias ${signed(bias)}`, `${which} (${from} ${list})`, what];
  return lines ? parts.join("\n") : `${parts[0]}: ${parts.slice(1).join("; ")}.`;
}

// An edge's read-out.
export function edgeText(layer, from, to, weight, layers, inputNames) {
  return `weight from ${unitName(layer - 1, from, layers, inputNames)} to ` +
         `${unitName(layer, to, layers, inputNames)}: ${signed(weight)}`;
}
