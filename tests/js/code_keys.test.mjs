// The program box's keys (static/code_keys.js): what Tab, Shift+Tab and Enter do to the text.
import assert from "node:assert/strict";
import { test } from "node:test";

import { INDENT, keyEdit } from "../../static/code_keys.js";

// The text after applying an edit, with | at the caret (or [ ] around the selection).
function apply(text, start, end, key, shift = false) {
  const edit = keyEdit(text, start, end, key, shift);
  if (edit === null) return null;
  const out = text.slice(0, edit.from) + edit.insert + text.slice(edit.to);
  const [s, e] = edit.select;
  return s === e ? out.slice(0, s) + "|" + out.slice(s) : out.slice(0, s) + "[" + out.slice(s, e) + "]" + out.slice(e);
}

test("Tab at the caret inserts four spaces", () => {
  assert.equal(apply("if w > 0:\n", 10, 10, "Tab"), "if w > 0:\n" + INDENT + "|");
});

test("Tab over a selection indents every line it touches, and keeps them selected", () => {
  const text = "a = 1\nb = 2\nc = 3";
  assert.equal(apply(text, 0, 11, "Tab"), "[    a = 1\n    b = 2]\nc = 3");
  // A selection ending at the start of a line leaves that line alone.
  assert.equal(apply(text, 0, 6, "Tab"), "[    a = 1\n]b = 2\nc = 3");
});

test("Shift+Tab outdents by one level, never past the margin", () => {
  assert.equal(apply("    x = 1", 6, 6, "Tab", true), "x |= 1");
  assert.equal(apply("  x = 1", 0, 0, "Tab", true), "|x = 1");
  assert.equal(apply("x = 1", 2, 2, "Tab", true), "x |= 1");
  assert.equal(apply("        a\n    b", 0, 15, "Tab", true), "[    a\nb]");
});

test("Enter keeps the line's indentation and adds a level after a colon", () => {
  assert.equal(apply("    y = w * x", 13, 13, "Enter"), "    y = w * x\n    |");
  assert.equal(apply("if w > 0:", 9, 9, "Enter"), "if w > 0:\n    |");
  assert.equal(apply("for i in range(3):  ", 20, 20, "Enter"), "for i in range(3):  \n    |");
  assert.equal(apply("    with torch.no_grad():", 25, 25, "Enter"), "    with torch.no_grad():\n        |");
  // Enter in the middle of a line splits it at the caret, with the indentation before it.
  assert.equal(apply("    a = b", 8, 8, "Enter"), "    a = \n    |b");
});

test("other keys are left to the browser", () => {
  assert.equal(keyEdit("x", 0, 0, "a"), null);
  assert.equal(keyEdit("x", 0, 0, "Escape"), null);
});
