// Small hand-written fakes for the live view's tests (static/live/): there is no DOM in Node and
// the project takes no npm dependency for one. Each fake has only what the view's modules touch,
// and records what they do with it. Not a test file itself (no .test.mjs): the tests import it.

// An element: attributes, dataset, style, classes, listeners and children. querySelector answers
// one element per selector, made on first ask (`answers` may set them beforehand);
// querySelectorAll answers `all[selector]` (else none).
export class FakeElement {
  constructor(tag = "div", props = {}) {
    this.tagName = tag.toUpperCase();
    this.dataset = {};
    this.attributes = new Map();
    this.attributeWrites = 0;
    this.listeners = {};
    this.children = [];
    this.style = new FakeStyle();
    this.classList = new FakeClassList();
    this.hidden = false;
    this.textContent = "";
    this.answers = new Map();
    this.all = {};
    this.matching = [];            // the selectors `matches` says yes to (":focus", ...)
    this.box = { left: 0, top: 0, width: 0, height: 0 };
    this.removed = false;
    Object.assign(this, props);
  }

  getAttribute(name) { return this.attributes.has(name) ? this.attributes.get(name) : null; }

  setAttribute(name, value) {
    this.attributes.set(name, String(value));
    this.attributeWrites += 1;
  }

  addEventListener(type, listener, capture = false) {
    (this.listeners[type] ??= []).push({ listener, capture: capture === true });
  }

  removeEventListener(type, listener, capture = false) {
    this.listeners[type] = (this.listeners[type] || []).filter(
      (l) => !(l.listener === listener && l.capture === (capture === true)));
  }

  // Call `type`'s listeners with `event` (its target this element unless it names one).
  dispatch(type, event = {}) {
    for (const { listener } of this.listeners[type] || []) listener({ target: this, ...event });
  }

  querySelector(selector) {
    if (!this.answers.has(selector)) this.answers.set(selector, new FakeElement());
    return this.answers.get(selector);
  }

  querySelectorAll(selector) { return this.all[selector] || []; }

  appendChild(child) {
    this.children.push(child);
    child.parentNode = this;
    return child;
  }

  append(...children) { for (const child of children) this.appendChild(child); }

  replaceChildren(...children) {
    this.children = [];
    this.append(...children);
  }

  remove() { this.removed = true; }

  matches(selector) { return this.matching.includes(selector); }

  closest(selector) { return this.matching.includes(selector) ? this : null; }

  getBoundingClientRect() { return { ...this.box }; }

  contains(other) { return other === this || this.children.some((c) => c.contains && c.contains(other)); }

  focus() { this.focused = (this.focused || 0) + 1; }
}

export class FakeStyle {
  constructor() { this.properties = new Map(); }
  getPropertyValue(name) { return this.properties.get(name) || ""; }
  setProperty(name, value) { this.properties.set(name, value); }
}

export class FakeClassList {
  constructor() { this.names = new Set(); }
  add(name) { this.names.add(name); }
  contains(name) { return this.names.has(name); }
  toggle(name, on) {
    if (on ?? !this.names.has(name)) this.names.add(name); else this.names.delete(name);
  }
}

// A 2D context: records fillText, measures text at `charPx` pixels a character, holds a transform.
export class FakeContext {
  constructor(canvas, charPx = 6) {
    this.canvas = canvas;
    this.charPx = charPx;
    this.texts = [];
    this.transform = { a: 1, b: 0, c: 0, d: 1, e: 0, f: 0 };
    this.cleared = [];
  }

  setTransform(a, b, c, d, e, f) { this.transform = { a, b, c, d, e, f }; }
  getTransform() { return { ...this.transform }; }
  clearRect(x, y, w, h) { this.cleared.push([x, y, w, h]); }
  fillText(text, x, y) { this.texts.push([text, x, y]); }

  measureText(text) {
    const width = text.length * this.charPx;
    return { width, actualBoundingBoxLeft: 0, actualBoundingBoxRight: width, actualBoundingBoxAscent: 8,
             actualBoundingBoxDescent: 2 };
  }
}

// A canvas element with one FakeContext.
export function fakeCanvas(props = {}) {
  const canvas = new FakeElement("canvas", { width: 300, height: 150, ...props });
  canvas.context = new FakeContext(canvas);
  canvas.getContext = () => canvas.context;
  return canvas;
}

const align = (n) => Math.ceil(n / 4) * 4;

// A message as components/binary_payload.py's pack lays it out: [u32 LE header length][header
// JSON, padded with spaces][each blob at a 4-byte aligned offset], header.blobs = {name: [offset,
// length, dtype]}.
export function pack(header, blobs = {}) {
  const raw = Object.entries(blobs).map(([name, array]) => [
    name, new Uint8Array(array.buffer, array.byteOffset, array.byteLength),
    array instanceof Float32Array ? "float32" : "uint8"]);
  let guess = 0, text;
  for (;;) {
    let offset = align(4 + guess);
    const table = {};
    for (const [name, bytes, dtype] of raw) {
      table[name] = [offset, bytes.length, dtype];
      offset = align(offset + bytes.length);
    }
    text = new TextEncoder().encode(JSON.stringify({ ...header, blobs: table }));
    if (text.length <= guess) break;
    guess = text.length;
  }
  const end = raw.length ? align(4 + guess) + raw.reduce((n, [, b]) => align(n + b.length), 0) : 4 + guess;
  const out = new Uint8Array(end).fill(0);
  new DataView(out.buffer).setUint32(0, guess, true);
  out.fill(0x20, 4, 4 + guess);
  out.set(text, 4);
  const table = JSON.parse(new TextDecoder().decode(text)).blobs;
  for (const [name, bytes] of raw) out.set(bytes, table[name][0]);
  return out;
}

// A recorder: `calls` lists [name, ...args] of every call to the methods named in `names`.
export function recorder(names, results = {}) {
  const calls = [];
  const methods = Object.fromEntries(names.map((name) => [name, (...args) => {
    calls.push([name, ...args]);
    return typeof results[name] === "function" ? results[name](...args) : results[name];
  }]));
  return { calls, methods, named: (name) => calls.filter((c) => c[0] === name) };
}
