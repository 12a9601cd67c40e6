"""Is the package in layers that point one way (autograder/__init__.py lists them)?

The import graph is read from the source (every ``import``, at module level or inside a function:
an import inside a function still ties two modules together), so these tests see what Python
would only find when the function runs."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import autograder
import without_numba
from autograder import _aliases
from autograder.grading import judge

PACKAGE = Path(autograder.__file__).resolve().parent
LAYERS = ("core", "machine", "grading", "problems", "learner", "tools")   # lowest first
TOP = len(LAYERS)      # the facade (autograder/__init__.py), __main__ and the old names' aliases


def _name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports (old names resolved to new ones)."""
    modules = {_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}

    def resolve(name: str) -> str | None:
        name = _aliases.new_name(name) or name
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    def is_module(name: str) -> bool:
        return (_aliases.new_name(name) or name) in modules

    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
                # `from pkg import mod` imports the submodule; `from mod import name` the module
                targets = [f"{base}.{a.name}" if is_module(f"{base}.{a.name}") else base
                           for a in node.names]
            else:
                continue
            for target in targets:
                if target.split(".")[0] != "autograder":
                    continue
                found = resolve(target)
                if found and found != module:
                    graph[module].add(found)
    return graph


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("__main__", "_aliases"):
        return TOP
    if parts[1] == "data":       # files the package reads (measurements, hints): no code
        return 0
    assert parts[1] in LAYERS, f"{module} is in no layer: put it in one of {LAYERS}"
    return LAYERS.index(parts[1])


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_every_module_is_in_a_layer():
    for module in _graph():
        _layer(module)


def test_no_import_circle():
    assert _circles(_graph()) == []


def test_layers_point_one_way():
    graph = _graph()
    upward = [f"{m} -> {t}" for m, targets in graph.items() for t in targets
              if _layer(t) > _layer(m)]
    assert upward == [], "\n".join(upward)


def test_the_graph_sees_imports_inside_functions(tmp_path, monkeypatch):
    """The checks above can fail: an import inside a function that closes a circle is found."""
    graph = _graph()
    graph["autograder.core.checks"].add("autograder.grading.judge")   # as `def f(): from ... import`
    assert _circles(graph)
    source = textwrap.dedent("""
        def late():
            from autograder.grading import judge
    """)
    found = {n.module for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)}
    assert found == {"autograder.grading"}


def test_core_imports_without_numba():
    """core is pure Python: its modules import on a machine where Numba does not."""
    proc = without_numba.run("""
        import importlib
        for name in ("checks", "spec", "explain", "progress"):
            importlib.import_module("autograder.core." + name)
        print("ok")
    """)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


@pytest.mark.parametrize("old", sorted(_aliases.MOVED))
def test_old_module_paths_are_the_same_modules(old):
    """``autograder.judge`` and ``autograder.grading.judge`` are one module (patch one, patch both)."""
    assert importlib.import_module(old) is importlib.import_module(_aliases.MOVED[old])


def test_old_paths_run_with_python_m(repo_root):
    proc = subprocess.run([sys.executable, "-m", "autograder.build", "--help"], cwd=repo_root,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "Regenerate course/" in proc.stdout, proc.stderr[-2000:]


@pytest.mark.parametrize("code", [
    "from autograder.grading.judge import CheckCall",
    "import autograder.grading.runner",
    "from autograder.machine.simulator import races",
    "from autograder.core import checks",
    "import autograder as ag\nag.grading.judge",
    "from autograder.judge import CheckCall",           # the old name still counts
])
def test_the_static_pass_follows_the_moves(code):
    """Reaching for the checking code is flagged under its new paths as under its old ones."""
    assert any("checking code" in flag for flag in judge.flags_in(code)), judge.flags_in(code)
    if "autograder." in code:    # the regexes, for cells that do not parse
        assert any("checking code" in what for pattern, what in judge.SUSPICIOUS.items()
                   if re.search(pattern, code))


def _private_uses() -> list[str]:
    """``module -> other.module._name`` for every private name (one leading underscore) that a
    module of the package takes from another: imported by name, or reached as an attribute of
    an imported module. Dunder names (``__version__``) are public."""
    modules = {_name(p): p for p in PACKAGE.rglob("*.py")}
    found = set()

    def private(name: str) -> bool:
        return name.startswith("_") and not name.startswith("__")

    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text())
        bound: dict[str, str] = {}     # local name -> the package module it is
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
                if base.split(".")[0] != "autograder":
                    continue
                for a in node.names:
                    full = _aliases.new_name(f"{base}.{a.name}") or f"{base}.{a.name}"
                    if full in modules:
                        bound[a.asname or a.name] = full
                    elif private(a.name):
                        found.add(f"{module} -> {base}.{a.name}")
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == "autograder":
                        bound[a.asname or "autograder"] = a.name if a.asname else "autograder"
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and private(node.attr)):
                continue
            chain, base = [], node.value
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id in bound:
                owner = ".".join([bound[base.id], *reversed(chain)])
                owner = _aliases.new_name(owner) or owner
                if owner in modules and owner != module:
                    found.add(f"{module} -> {owner}.{node.attr}")
    return sorted(found)


def test_no_private_name_crosses_modules():
    """What one module takes from another is public: a private name is free to change."""
    assert _private_uses() == []


def test_the_private_name_check_can_fail(monkeypatch):
    source = "from autograder.core.checks import _fmt\nimport autograder.grading.judge as j\nj._x\n"
    real = Path.read_text
    target = PACKAGE / "learner" / "notebook.py"
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: source if self == target
                        else real(self, *a, **k))
    found = _private_uses()
    assert "autograder.learner.notebook -> autograder.core.checks._fmt" in found
    assert "autograder.learner.notebook -> autograder.grading.judge._x" in found
