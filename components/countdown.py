"""A countdown the browser runs: "Closes in 0:45", then the sentence for when time is up.

The server sends the seconds left, not a clock time, so a learner's laptop whose clock is off
still counts the right seconds; no page run happens while it ticks (a run per second per learner
would be what a class of sixty cannot afford). The store refuses an answer that arrives after the
timer, whatever the browser shows. A `timer` role, which screen readers do not announce on every
tick; the end's sentence is announced once (`aria-live="polite"` on a separate line).
"""
from __future__ import annotations

import streamlit as st

_JS = """
export default function (component) {
  const { seconds, label, ended } = component.data;
  const root = component.parentElement;
  root.innerHTML = "";
  const clock = document.createElement("p");
  clock.setAttribute("role", "timer");
  clock.className = "workbench-countdown";
  const done = document.createElement("p");
  done.setAttribute("aria-live", "polite");
  done.className = "workbench-countdown";
  root.append(clock, done);
  const end = performance.now() + seconds * 1000;
  const show = () => {
    const left = Math.max(0, Math.ceil((end - performance.now()) / 1000));
    if (left === 0) {
      clock.textContent = "";
      done.textContent = ended;
      return false;
    }
    const minutes = Math.floor(left / 60);
    clock.textContent = `${label} ${minutes}:${String(left % 60).padStart(2, "0")}`;
    return true;
  };
  show();
  const timer = setInterval(() => { if (!show()) clearInterval(timer); }, 250);
  return () => clearInterval(timer);
}
"""
_CSS = """
.workbench-countdown { margin: 0; font-weight: 600; font-variant-numeric: tabular-nums;
                       color: inherit; }
"""
_COUNTDOWN = st.components.v2.component("workbench_countdown", js=_JS, css=_CSS)


def countdown(seconds: float, *, key: str, label: str = "Closes in",
              ended: str = "Time is up.") -> None:
    """Count down `seconds` in the browser, "`label` m:ss", then say `ended`."""
    _COUNTDOWN(data={"seconds": max(0.0, float(seconds)), "label": label, "ended": ended}, key=key)
