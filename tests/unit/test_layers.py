"""The layers stay apart: workbench/ is PyTorch logic without a UI, components/ is a kit for any tool.

- No module under workbench/ imports streamlit, plotly or graphviz, at any depth (an import inside
  a function counts: it still ties the logic to a UI library).
- No module under components/ names a tool: no import from app_pages or from a tool's package
  (each tool's package in workbench/tools.py, and workbench.lessons), and no tool's name in its code
  (comments and docstrings may mention one). workbench.common and the tools' records
  (workbench.tools, which a kit may iterate without naming one) are shared, so they are allowed.

Each check lists every offence as file:line, so one run shows all of them.
"""
from __future__ import annotations

import ast
import io
import sys
import tokenize
from pathlib import Path

from workbench.tools import TOOLS

ROOT = Path(__file__).resolve().parents[2]
UI_LIBRARIES = ("streamlit", "plotly", "graphviz")
TOOL_PACKAGES = ("app_pages", *(tool.package for tool in TOOLS), "workbench.lessons")
TOOL_NAMES = tuple(tool.name for tool in TOOLS)


def _modules(layer: str) -> list[Path]:
    return sorted(p for p in (ROOT / layer).rglob("*.py") if "__pycache__" not in p.parts)


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT).as_posix()}:{line}"


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute dotted name) of every import in the file, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:                     # relative: resolve against the module's package
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names)
    return found


def _within(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def _tool_names_in_code(path: Path) -> list[tuple[int, str]]:
    """(line, tool name) for each tool named in code: names, strings, f-strings; not comments or
    docstrings."""
    source = path.read_text(encoding="utf-8")
    docstrings = _docstring_lines(ast.parse(source, filename=str(path)))
    found: list[tuple[int, str]] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE):
            continue
        if token.type == tokenize.STRING and token.start[0] in docstrings:
            continue
        for name in TOOL_NAMES:
            if name in token.string:
                found.append((token.start[0], name))
    return sorted(set(found))


def layer_violations() -> list[str]:
    """workbench/ modules that import a UI library."""
    return [f"{_where(path, line)} imports {name}"
            for path in _modules("workbench")
            for line, name in _imports(path)
            if _within(name, UI_LIBRARIES)]


def kit_violations() -> list[str]:
    """components/ modules that import a tool or name one."""
    out: list[str] = []
    for path in _modules("components"):
        seen: set[tuple[int, str]] = set()
        for line, name in _imports(path):
            if _within(name, TOOL_PACKAGES):
                top = next(p for p in TOOL_PACKAGES if _within(name, (p,)))
                if (line, top) not in seen:
                    seen.add((line, top))
                    out.append(f"{_where(path, line)} imports {top} ({name})")
        out.extend(f"{_where(path, line)} names the tool {tool!r}"
                   for line, tool in _tool_names_in_code(path))
    return out


def test_workbench_imports_no_ui_library():
    found = layer_violations()
    assert not found, "workbench/ must not import a UI library:\n" + "\n".join(found)


def test_components_name_no_tool():
    found = kit_violations()
    assert not found, "components/ must not know the tools:\n" + "\n".join(found)


# The checks themselves, on planted files, so a silent checker cannot pass for a clean tree.

def test_the_import_check_sees_imports_inside_functions_and_relative_ones(tmp_path, monkeypatch):
    pkg = tmp_path / "components"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "kit.py").write_text(
        "def f():\n"
        "    import plotly.graph_objects as go\n"
        "    from ..app_pages.moons_trainer import page\n"
        "    return go, page\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    names = [name for _, name in _imports(pkg / "kit.py")]
    assert "plotly.graph_objects" in names
    assert any(_within(n, ("app_pages",)) for n in names), names


def test_the_name_check_skips_comments_and_docstrings(tmp_path):
    module = tmp_path / "kit.py"
    module.write_text(
        '"""Used by the moons_trainer page."""\n'
        "# the tensor_inspector calls this too\n"
        "def f():\n"
        '    """For the autograd_graph."""\n'
        '    return "batch_iterator"\n'
        'KEY = f"{1}_moons_trainer"\n')
    assert _tool_names_in_code(module) == [(5, "batch_iterator"), (6, "moons_trainer")]
