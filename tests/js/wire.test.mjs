// unpack (static/live/wire.js) against messages laid out as components/binary_payload.py's pack
// lays them out, built byte by byte (fakes.mjs's pack, which the other tests' frames use too);
// and, where the project's Python is at hand, against pack itself.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

import { unpack } from "../../static/live/wire.js";
import { pack } from "./fakes.mjs";

test("unpack returns the header and the blobs as typed arrays", () => {
  const grid = Uint8Array.from([0, 127, 128, 255, 3]);
  const xy = Float32Array.from([-1.5, 0.25, 3.0e-3, 1e6]);
  const header = { frame: { epoch: 7, status: "epoch 7 of 10: x\u2081 \u2248 0.5" }, poll: null };
  const { header: h, blobs } = unpack(pack(header, { grid, train_xy: xy }));
  assert.deepEqual(h.frame, header.frame);
  assert.equal(h.poll, null);
  assert.ok(blobs.grid instanceof Uint8Array);
  assert.deepEqual([...blobs.grid], [...grid]);
  assert.ok(blobs.train_xy instanceof Float32Array);
  assert.deepEqual([...blobs.train_xy], [...xy]);
});

test("unpack's blobs own their bytes, whatever the message's offset in its buffer", () => {
  const message = pack({ a: 1 }, { odd: Uint8Array.from([1, 2, 3]), values: Float32Array.from([0.5, -2]) });
  const shifted = new Uint8Array(message.length + 1);
  shifted.set(message, 1);
  const { blobs } = unpack(shifted.subarray(1));      // a view at an odd offset
  assert.deepEqual([...blobs.values], [0.5, -2]);
  assert.equal(blobs.values.byteOffset, 0);
  blobs.odd[0] = 99;
  assert.equal(shifted[1 + unpack(shifted.subarray(1)).header.blobs.odd[0]], 1);
});

test("a message without blobs", () => {
  const { header, blobs } = unpack(pack({ ended: true }, {}));
  assert.equal(header.ended, true);
  assert.deepEqual(blobs, {});
});

// The real pack, where the project's Python runs (make test: .venv/bin/python; else $PYTHON).
const python = process.env.PYTHON || fileURLToPath(new URL("../../.venv/bin/python", import.meta.url));
const root = fileURLToPath(new URL("../../", import.meta.url));

test("unpack is the inverse of components/binary_payload.py's pack", (t) => {
  if (!existsSync(python)) return t.skip(`no ${python}`);
  const code = `
import sys, numpy as np
from components.binary_payload import pack
sys.stdout.write(pack({"frame": {"epoch": 3, "status": "x\\u2081"}, "scene_id": "s"},
                      {"grid": np.arange(10, dtype=np.uint8),
                       "xy": np.array([0.5, -1.25, 7], dtype=np.float32)}).hex())`;
  const run = spawnSync(python, ["-c", code], { cwd: root, encoding: "utf8" });
  if (run.status !== 0) return t.skip(`python failed: ${run.stderr}`);
  const bytes = Uint8Array.from(run.stdout.match(/../g).map((h) => parseInt(h, 16)));
  const { header, blobs } = unpack(bytes);
  assert.deepEqual(header.frame, { epoch: 3, status: "x\u2081" });
  assert.equal(header.scene_id, "s");
  assert.deepEqual([...blobs.grid], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.ok(blobs.xy instanceof Float32Array);
  assert.deepEqual([...blobs.xy], [0.5, -1.25, 7]);
});
