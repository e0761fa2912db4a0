"""The Streamlit internals the app reads, pinned: an upgrade that renames them fails here, by name,
instead of silently changing what a page does."""
from __future__ import annotations

import dataclasses

from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext


def test_the_script_run_context_says_which_fragments_this_run_is_for():
    """components.state.fragment_rerun reads it: the batch iterator's view redraws the whole
    page when a fragment rerun ran the DataLoader again."""
    assert "fragment_ids_this_run" in {f.name for f in dataclasses.fields(ScriptRunContext)}
