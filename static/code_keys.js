// A program box that types like a code editor: Tab indents, Shift+Tab outdents, Enter keeps the
// line's indentation and adds a level after a line ending in ":", and the box is monospace.
// Esc, then Tab, leaves the box, so the keyboard is never trapped in it (WCAG 2.1.2).
//
// Streamlit's own text area stays the widget (its value, its lesson link, its tests); this only
// changes what some keys do in it. Edits go through document.execCommand("insertText"), which
// fires the input events React listens to and keeps the browser's undo history.
//
// Why not a code editor package: the maintained ones (Ace, CodeMirror, Monaco in a Streamlit
// component) replace the widget with an iframe or load their code from a CDN; this page must
// make no request to another host, and its program is a settings-table widget like any other.

export const INDENT = "    ";

const lineStart = (text, at) => text.lastIndexOf("\n", at - 1) + 1;
const lineEnd = (text, at) => {
  const end = text.indexOf("\n", at);
  return end === -1 ? text.length : end;
};

// The edit a key makes to `text` with the selection [start, end): the range [from, to) to
// replace, what to put there, and the selection afterwards; null when the key is left alone.
export function keyEdit(text, start, end, key, shift = false) {
  if (key === "Tab") {
    // The lines the selection touches (a selection ending at a line's start leaves that line).
    const last = end > start && text[end - 1] === "\n" ? end - 1 : end;
    const from = lineStart(text, start), to = lineEnd(text, last);
    const lines = text.slice(from, to).split("\n");
    if (!shift && start === end) {
      return { from: start, to: end, insert: INDENT, select: [start + INDENT.length, start + INDENT.length] };
    }
    const changed = lines.map((line) => (shift ? line.replace(/^ {1,4}|^\t/, "") : INDENT + line));
    const insert = changed.join("\n");
    const firstDelta = changed[0].length - lines[0].length;
    const totalDelta = insert.length - (to - from);
    // A selection from a line's start keeps the whole line, its new indentation included.
    const newStart = start === from && start !== end ? from : Math.max(from, start + firstDelta);
    const newEnd = start === end ? newStart : Math.max(newStart, end + totalDelta);
    return { from, to, insert, select: [newStart, newEnd] };
  }
  if (key === "Enter") {
    const from = lineStart(text, start);
    const before = text.slice(from, start);
    let indent = before.match(/^[ \t]*/)[0];
    if (before.trimEnd().endsWith(":")) indent += INDENT;
    const insert = "\n" + indent;
    return { from: start, to: end, insert, select: [start + insert.length, start + insert.length] };
  }
  return null;
}

// Attaches the keys to every text area matching `selector`, now and later (one listener on the
// document: Streamlit may replace the text area when the page reruns).
export function install(doc, selector, hint) {
  const installed = (doc.__codeKeys ??= new Set());
  if (!installed.has(selector)) {
    installed.add(selector);
    const style = doc.createElement("style");
    style.textContent = `${selector} { font-family: "Source Code Pro", ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; tab-size: 4; }`;
    doc.head.appendChild(style);
    let leaving = false;
    doc.addEventListener("keydown", (event) => {
      const box = event.target;
      if (!(box instanceof doc.defaultView.HTMLTextAreaElement) || !box.matches(selector)) return;
      if (event.isComposing || event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.key === "Escape") { leaving = true; return; }
      if (event.key === "Tab" && leaving) { leaving = false; return; }   // focus moves on
      leaving = false;
      if (event.key === "Enter" && event.shiftKey) return;
      const edit = keyEdit(box.value, box.selectionStart, box.selectionEnd, event.key, event.shiftKey);
      if (edit === null) return;
      event.preventDefault();
      box.setSelectionRange(edit.from, edit.to);
      if (!doc.execCommand("insertText", false, edit.insert)) {   // no undo entry, but the edit
        box.setRangeText(edit.insert, edit.from, edit.to, "end");
        box.dispatchEvent(new Event("input", { bubbles: true }));
      }
      box.setSelectionRange(edit.select[0], edit.select[1]);
    }, true);
  }
  // Say how the keys work to a screen reader, on whichever text area is there now.
  for (const box of doc.querySelectorAll(selector)) {
    if (box.getAttribute("aria-describedby")?.includes("code-keys-hint")) continue;
    const id = `code-keys-hint-${Math.random().toString(36).slice(2)}`;
    const note = doc.createElement("span");
    note.id = id;
    note.textContent = hint;
    note.style.cssText = "position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;";
    box.insertAdjacentElement("afterend", note);
    box.setAttribute("aria-describedby", [box.getAttribute("aria-describedby"), id].filter(Boolean).join(" "));
  }
}
