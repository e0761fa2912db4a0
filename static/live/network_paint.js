// The network view's picture, as numbers: a unit's map painted into pixels in the sign colours,
// the edges bucketed by sign and width (a few strokes however many edges), and the edge under the
// pointer.
//
// Pure: no DOM (tests/js/network_paint.test.mjs). network.js's `NetworkPane` draws with them.

export const EDGE_WIDTHS = 5;         // edges are stroked in this many widths per sign
export const HIT_PX = 4;              // how near the pointer must be to an edge to read it


// Paint a unit's uint8 map (`side` x `side` codes from `offset`, in the range low..high; rows
// = y, row 0 the lowest) into RGBA `pixels` with row 0 at the bottom: the background at zero,
// the negative colour at minus the unit's largest |value|, the positive one at plus it.
// Inlined, no arrays per pixel: 96 maps of 144 points, five times a second.
export function paintMap(pixels, codes, offset, side, low, high, negative, positive, background) {
  const extreme = Math.max(Math.abs(low), Math.abs(high)), step = (high - low) / 255;
  for (let r = 0; r < side; r++) {
    for (let c = 0; c < side; c++) {
      const value = low + codes[offset + r * side + c] * step;
      const t = extreme > 0 ? Math.max(-1, Math.min(1, value / extreme)) : 0;
      const towards = t < 0 ? negative : positive, a = Math.abs(t);
      const i = ((side - 1 - r) * side + c) * 4;
      pixels[i] = background[0] + (towards[0] - background[0]) * a;
      pixels[i + 1] = background[1] + (towards[1] - background[1]) * a;
      pixels[i + 2] = background[2] + (towards[2] - background[2]) * a;
      pixels[i + 3] = 255;
    }
  }
}

// An edge's width bucket, 0 .. EDGE_WIDTHS - 1, by |weight| over the layer's largest.
export function widthBucket(weight, scale, buckets = EDGE_WIDTHS) {
  if (!(scale > 0)) return 0;
  return Math.min(buckets - 1, Math.floor(Math.abs(weight) / scale * buckets));
}

// A bucket's line width in pixels (times the view's scale) and opacity: thin and faint for weak
// weights, so that the strong ones stand out of a layer of two thousand.
export function bucketStroke(bucket, buckets = EDGE_WIDTHS) {
  const t = (bucket + 1) / buckets;
  return { width: 0.5 + 2.5 * t * t, alpha: 0.2 + 0.8 * t * t };
}

// The edge nearest (x, y) within `tolerance` pixels, or null. `edges` are {x0, y0, x1, y1, ...}.
export function nearestEdge(edges, x, y, tolerance = HIT_PX) {
  let best = null, bestDistance = tolerance * tolerance;
  for (const e of edges) {
    const dx = e.x1 - e.x0, dy = e.y1 - e.y0;
    const length = dx * dx + dy * dy;
    const t = length ? Math.max(0, Math.min(1, ((x - e.x0) * dx + (y - e.y0) * dy) / length)) : 0;
    const d = (e.x0 + t * dx - x) ** 2 + (e.y0 + t * dy - y) ** 2;
    if (d <= bestDistance) { bestDistance = d; best = e; }
  }
  return best;
}

// The edges between the units that show, and their paths: `anchors[layer][unit]` is where a
// shown unit sits ({right, left, y}; null: folded away), `weights[l - 1]` the Linear into
// column l (row-major: out, in), `scales[l - 1]` its largest |weight|. Returns every edge
// ({x0, y0, x1, y1, layer, from, to, weight}) and, per bucket, those stroked alike: bucket b
// (widthBucket) for a positive weight, EDGE_WIDTHS + b for a negative one (a sparse array).
export function layEdges(anchors, widths, weights, scales) {
  const edges = [], paths = [];
  for (let l = 1; l < widths.length; l++) {
    const layerWeights = weights[l - 1], inWidth = widths[l - 1], scale = scales[l - 1];
    for (let to = 0; to < widths[l]; to++) {
      const b = anchors[l][to];
      if (!b) continue;
      for (let from = 0; from < inWidth; from++) {
        const a = anchors[l - 1][from];
        if (!a) continue;
        const weight = layerWeights[to * inWidth + from];
        const bucket = widthBucket(weight, scale) + (weight < 0 ? EDGE_WIDTHS : 0);
        const edge = { x0: a.right, y0: a.y, x1: b.left, y1: b.y, layer: l, from, to, weight };
        (paths[bucket] ??= []).push(edge);
        edges.push(edge);
      }
    }
  }
  return { edges, paths };
}
