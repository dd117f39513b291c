"""The import graph of a flambeau package, read from its source (nothing is imported).

Used by the packages' layering tests (``core-tensor/tests/test_import_layers.py``) and from the
command line, to see the strongly connected components (import cycles) of a source tree::

    python -m flambeau.testing._import_graph core-tensor/src/flambeau [core-autograd/src/flambeau/autograd]

Each ``import`` statement is an edge from the module that holds it to the module it names, kept
apart by where it runs:

- *module level*: runs when the module is imported (also inside ``if``/``try`` and class bodies);
  these edges must form layers;
- *function level*: runs when the function is called (a late binding);
- imports under ``if TYPE_CHECKING:`` never run and are left out.

``from X import name`` is an edge to ``X.name`` where that is a module of the tree, else to ``X``.
At module level, importing ``pkg.sub.mod`` first runs ``pkg/sub/__init__.py``: that is an edge to
``pkg.sub`` too (unless the importing module is inside ``pkg.sub``, whose ``__init__`` is then
running already); the root package's own ``__init__`` is left out, since every module of the tree
runs under it.
"""
from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Iterable

__all__ = ["ImportGraph", "Layers", "import_graph", "strongly_connected_components"]


@dataclass
class ImportGraph:
    """Modules of a source tree and their imports of one another.

    ``module_level[a]`` and ``function_level[a]`` map each module ``a`` to the set of modules of
    the same tree that it imports there; ``lines[(a, b)]`` is where ``a`` first imports ``b``.
    """

    modules: set[str] = field(default_factory=set)
    module_level: dict[str, set[str]] = field(default_factory=dict)
    function_level: dict[str, set[str]] = field(default_factory=dict)
    lines: dict[tuple[str, str], int] = field(default_factory=dict)


def _module_name(path: Path, root: Path, root_name: str) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([root_name, *parts])


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


class _Collector(ast.NodeVisitor):
    """Collects ``(target, line, in_function)`` for every import statement of one module."""

    def __init__(self, module: str, is_package: bool, known: set[str], root: str) -> None:
        self.module = module
        self.root = root
        # The package that relative imports start from.
        self.package = module if is_package else module.rpartition(".")[0]
        self.known = known
        self.depth = 0
        self.found: list[tuple[str, int, bool]] = []

    def _add(self, target: str, line: int) -> None:
        # Attribute the import to the deepest module of the tree that it names.
        while target and target not in self.known:
            target = target.rpartition(".")[0]
        if not target or target == self.module:
            return
        in_function = self.depth > 0
        self.found.append((target, line, in_function))
        if in_function:
            return  # by the time a function runs, every package of the tree has finished importing
        # At import time, `import a.b.c` first runs a/b/__init__.py (unless it is running already:
        # a package that holds the importing module).
        package = target.rpartition(".")[0]
        while package and package != self.root and package in self.known:
            if not (self.module == package or self.module.startswith(package + ".")):
                self.found.append((package, line, False))
            package = package.rpartition(".")[0]

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            base = f"{base}.{node.module}" if node.module else base
        else:
            base = node.module or ""
        for alias in node.names:
            candidate = f"{base}.{alias.name}"
            self._add(candidate if candidate in self.known else base, node.lineno)


def import_graph(root: str | Path, root_name: str | None = None) -> ImportGraph:
    """The import graph of the package whose folder is ``root`` (its import name ``root_name``,
    by default the folder's name: ``core-autograd/src/flambeau/autograd`` -> ``flambeau.autograd``
    needs ``root_name="flambeau.autograd"``)."""
    root = Path(root)
    root_name = root_name or root.name
    files = {_module_name(p, root, root_name): p for p in sorted(root.rglob("*.py"))}
    graph = ImportGraph(modules=set(files))
    for module, path in files.items():
        collector = _Collector(module, path.name == "__init__.py", graph.modules, root_name)
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        graph.module_level[module] = set()
        graph.function_level[module] = set()
        for target, line, in_function in collector.found:
            (graph.function_level if in_function else graph.module_level)[module].add(target)
            graph.lines.setdefault((module, target), line)
    return graph


def strongly_connected_components(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of a directed graph with more than one node (the
    import cycles), largest first, each sorted (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return sorted(components, key=lambda c: (-len(c), c))


class Layers:
    """An ordered list of layers, lowest first: ``[(description, (module patterns...)), ...]``.

    A module belongs to the first layer one of whose ``fnmatch`` patterns matches its name; the
    last layer should take the rest (``"*"``).
    """

    def __init__(self, layers: list[tuple[str, tuple[str, ...]]]) -> None:
        self.layers = layers

    def of(self, module: str) -> int:
        for index, (_, patterns) in enumerate(self.layers):
            if any(fnmatchcase(module, p) for p in patterns):
                return index
        raise ValueError(f"{module} is in no layer")

    def stale_patterns(self, graph: ImportGraph) -> list[str]:
        """Patterns that match no module of ``graph`` (a module renamed or deleted)."""
        return [p for _, patterns in self.layers for p in patterns
                if not any(fnmatchcase(m, p) for m in graph.modules)]

    def upward(self, graph: ImportGraph, edges: dict[str, set[str]], allowed: Iterable[str] = ()) -> list[str]:
        """Every import in ``edges`` (``graph.module_level`` or ``graph.function_level``) from a
        module to one of a higher layer, but those of the ``allowed`` modules, as readable lines."""
        allowed = set(allowed)
        found = []
        for module, targets in sorted(edges.items()):
            if module in allowed:
                continue
            for target in sorted(targets):
                if self.of(target) > self.of(module):
                    found.append(f"{module} (layer {self.of(module)}, line {graph.lines[(module, target)]}) "
                                 f"imports {target} (layer {self.of(target)})")
        return found

    def cycles_below(self, graph: ImportGraph, top: int, skip: Iterable[str] = ()) -> list[list[str]]:
        """The import cycles among the modules of layers below ``top``, function-level imports
        included (a cycle hidden inside functions is still one to read), ``skip`` left out."""
        skip = set(skip)
        keep = {m for m in graph.modules if self.of(m) < top and m not in skip}
        edges = {m: (graph.module_level[m] | graph.function_level[m]) & keep for m in keep}
        return strongly_connected_components(edges)


def _report(root: str, root_name: str | None) -> None:
    graph = import_graph(root, root_name)
    print(f"{root}: {len(graph.modules)} modules")
    both = {m: graph.module_level[m] | graph.function_level[m] for m in graph.modules}
    for label, edges in (("module-level", graph.module_level), ("all (function-level too)", both)):
        components = strongly_connected_components(edges)
        print(f"  {label} import cycles: {len(components)}")
        for component in components:
            print(f"    {len(component)} modules: {', '.join(component)}")
    late = {m: sorted(t) for m, t in graph.function_level.items() if t}
    print(f"  modules with function-level imports: {len(late)}")
    for module, targets in sorted(late.items()):
        print(f"    {module} -> {', '.join(targets)}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python -m flambeau.testing._import_graph SRC_DIR [SRC_DIR...]")
    for arg in sys.argv[1:]:
        path = Path(arg)
        # core-autograd/src/flambeau/autograd -> flambeau.autograd
        name = ".".join(path.resolve().parts[-2:]) if path.resolve().parent.name == "flambeau" else None
        _report(arg, name)
