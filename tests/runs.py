"""Running generated notebooks and scripts with few process starts, each in its own folder.

Starting a Jupyter kernel or a Python that imports torch costs seconds; on a shared machine
that dominated the export tests. So:

- `SharedKernel` is one kernel for the whole test session (tests/unit/conftest.py's
  `shared_kernel`). Before each notebook it runs `%reset -f` (a fresh namespace: a notebook
  that forgot an import still fails) and moves into that notebook's own folder; modules stay
  imported, which is the point.
- `run_scripts` runs several scripts in one child Python, one after another, each as
  `__main__` from a file in its own folder (the working directory while it runs), with file
  descriptor 1 sent to a file per script so that output of worker processes is kept too.

Errors are collected, not raised, so one broken export fails its own test only.
"""
from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbformat import NotebookNode


@dataclass(frozen=True)
class Run:
    stdout: str
    error: str | None          # None: it ran to the end


def notebook_stdout(notebook: NotebookNode) -> str:
    return "".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                   for output in cell.get("outputs", []) if output.get("name") == "stdout")


def notebook_errors(notebook: NotebookNode) -> str | None:
    errors = [f"{output.get('ename')}: {output.get('evalue')}"
              for cell in notebook.cells if cell.cell_type == "code"
              for output in cell.get("outputs", []) if output.get("output_type") == "error"]
    return "\n".join(errors) or None


class SharedKernel:
    """One kernel; `run` executes a notebook in it, in `folder`, and returns the executed copy."""

    def __init__(self, client: NotebookClient):
        self._client = client

    @classmethod
    @contextlib.contextmanager
    def started(cls, folder: Path, timeout: int = 300) -> Iterator[SharedKernel]:
        client = NotebookClient(nbformat.v4.new_notebook(), timeout=timeout, kernel_name="python3",
                                allow_errors=True, resources={"metadata": {"path": str(folder)}})
        with client.setup_kernel():
            yield cls(client)

    def run(self, notebook: NotebookNode, folder: Path) -> NotebookNode:
        folder.mkdir(parents=True, exist_ok=True)
        preamble = nbformat.v4.new_code_cell(
            f"%reset -f\nimport os as _os\n_os.chdir({str(folder)!r})\ndel _os")
        cells = [nbformat.from_dict(cell) for cell in notebook.cells]
        client = self._client
        client.nb = nbformat.v4.new_notebook(cells=[preamble, *cells], metadata=notebook.metadata)
        client.reset_execution_trackers()
        for index, cell in enumerate(client.nb.cells):
            client.execute_cell(cell, index)
        prepared, *ran = client.nb.cells
        if any(output.get("output_type") == "error" for output in prepared.outputs):
            raise RuntimeError(f"could not prepare the shared kernel: {prepared.outputs}")
        return nbformat.v4.new_notebook(cells=ran, metadata=notebook.metadata)


_RUNNER = r"""
import json, os, runpy, sys, traceback
errors = {}
for name, path in json.loads(sys.stdin.read()):
    os.chdir(os.path.dirname(path))
    sys.stdout.flush()
    saved = os.dup(1)
    with open(path + ".stdout", "wb") as out:
        os.dup2(out.fileno(), 1)
        try:
            runpy.run_path(path, run_name="__main__")
            errors[name] = None
        except SystemExit as exc:
            errors[name] = None if exc.code in (None, 0) else f"SystemExit: {exc.code}"
        except BaseException:
            errors[name] = traceback.format_exc()
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
print(json.dumps(errors))
"""


def run_scripts(scripts: dict[str, str], folders: dict[str, Path], timeout: float = 600) -> dict[str, Run]:
    """Run each script from `folders[name]/<name>.py` with that folder as working directory, all
    in one child Python; what each printed and how it ended."""
    jobs = []
    for name, source in scripts.items():
        folders[name].mkdir(parents=True, exist_ok=True)
        path = folders[name] / f"{name}.py"
        path.write_text(source)
        jobs.append((name, str(path)))
    done = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps(jobs), capture_output=True,
                          text=True, timeout=timeout, cwd=next(iter(folders.values())))
    if done.returncode != 0:
        raise RuntimeError(f"the script runner failed ({done.returncode}):\n{done.stderr[-3000:]}")
    errors = json.loads(done.stdout.strip().splitlines()[-1])
    return {name: Run(Path(path + ".stdout").read_text(), errors[name]) for name, path in jobs}
