"""The layers of tapegrad, and the check that each module imports only from its own layer or
the layers below it (docs/design.md, "Layers").

The imports are read from the source files with ``ast``, so nothing is imported to check them.
The layers bind the module-level imports: an import inside a function runs when the function
is called, after every module has loaded, and one under ``if TYPE_CHECKING:`` never runs. The
cycles are counted twice, once with the imports inside functions too: a lower layer reaches a
higher one through a hook the higher one fills, not through an import.
Importing a submodule also runs the ``__init__`` of each package above it, so ``from
..nn.utils.rnn import X`` depends on ``tapegrad.nn.utils`` too.
"""

from __future__ import annotations

import ast
import fnmatch
import pathlib

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"

# Bottom to top. A pattern names one module ("tapegrad._tensor"), a package and everything
# under it ("tapegrad.ops.*"); a module belongs to the layer of the longest pattern it
# matches, so "tapegrad.autograd.function" sits above the rest of "tapegrad.autograd.*".
LAYERS: list[tuple[str, list[str]]] = [
    # the Tensor class with its data and metadata, and what describing them needs (no ops)
    ("tensor", ["tapegrad._tensor", "tapegrad._dtype", "tapegrad._device", "tapegrad._layout",
                "tapegrad._memory_format", "tapegrad._grad_state", "tapegrad._naming",
                "tapegrad._printing", "tapegrad._settings", "tapegrad._numpy_warnings",
                "tapegrad._alloc_errors", "tapegrad._finfo",
                "tapegrad._sort_emulation", "tapegrad._signatures", "tapegrad.return_types",
                "tapegrad.types", "tapegrad.torch_version", "tapegrad.version",
                "tapegrad._announce"]),
    # NumPy kernels and array helpers
    ("kernels", ["tapegrad.kernels.*", "tapegrad._blas", "tapegrad._allocator",
                 "tapegrad._rng"]),
    # the graph, the engine, grad modes, listeners
    ("autograd core", ["tapegrad.autograd.*"]),
    # the op registry and the op families
    ("ops", ["tapegrad.ops.*", "tapegrad._out"]),
    # the methods and functions attached to Tensor and tapegrad, and the autograd API built on ops
    ("surfaces", ["tapegrad._tensor_methods", "tapegrad._methods", "tapegrad._tensor_surface",
                  "tapegrad._torch_functions", "tapegrad._torch_alias", "tapegrad._faces",
                  "tapegrad._creation", "tapegrad._conversions", "tapegrad._legacy",
                  "tapegrad._random",
                  "tapegrad._sampling", "tapegrad._storage", "tapegrad._numpy_names",
                  "tapegrad._window_functions", "tapegrad._autocast",
                  "tapegrad._autocast_lists", "tapegrad._control_flow", "tapegrad._script",
                  "tapegrad._jit_internal", "tapegrad.fft", "tapegrad.linalg",
                  "tapegrad.special", "tapegrad.random", "tapegrad.storage",
                  "tapegrad.overrides", "tapegrad.accelerator", "tapegrad.autograd.function",
                  "tapegrad.autograd.forward_ad", "tapegrad.autograd.functional",
                  "tapegrad.autograd.profiler"]),
    # the libraries the package root imports
    ("libraries", ["tapegrad.nn.*", "tapegrad.optim.*", "tapegrad.utils.*", "tapegrad.amp.*",
                   "tapegrad.func.*", "tapegrad.signal.*", "tapegrad.cpu.*", "tapegrad.cuda.*",
                   "tapegrad.backends.*", "tapegrad.distributed.*", "tapegrad.serialization.*",
                   "tapegrad.profiler.*", "tapegrad.testing.*", "tapegrad._C.*", "tapegrad.jit",
                   "tapegrad.hub", "tapegrad._jit_archive", "tapegrad._compile"]),
    # tapegrad/__init__.py: gathers the layers below into the tapegrad namespace
    ("package", ["tapegrad"]),
    # written against the whole namespace (``import tapegrad as torch``), loaded on first use
    ("on the package", ["tapegrad.distributions.*", "tapegrad.vision.*", "tapegrad.functional",
                        "tapegrad.show.*", "tapegrad.compiler.*", "tapegrad._dynamo.*",
                        "tapegrad.demo.*", "tapegrad._cli", "tapegrad.__main__"]),
]

# Module-level imports that go up a layer and cannot be turned around yet:
# (importer, imported) -> why.
EXCEPTIONS: dict[tuple[str, str], str] = {}


def _modules() -> dict[str, tuple[pathlib.Path, bool]]:
    """Every module under src/tapegrad: its dotted name -> (file, is it a package)."""
    found = {}
    for path in sorted((SRC / "tapegrad").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = (path, is_package)
    return found


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom,
             known: dict) -> list[str]:
    """The dotted names an import statement loads (``from pkg import sub`` loads pkg.sub)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".")
        if not is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    return [f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in known else prefix
            for alias in node.names]


def _module_level_imports(tree: ast.AST, inside_functions: bool = False
                          ) -> list[ast.Import | ast.ImportFrom]:
    """The import statements that run when the module loads: not those in a function body
    (unless ``inside_functions``) or under ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if not inside_functions and isinstance(
                    child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            visit(child)

    visit(tree)
    return found


def import_graph(inside_functions: bool = False) -> dict[str, set[str]]:
    """Each tapegrad module -> the tapegrad modules its loading imports (packages included);
    with ``inside_functions``, those its functions import too."""
    known = _modules()
    graph: dict[str, set[str]] = {}
    for module, (path, is_package) in known.items():
        edges: set[str] = set()
        for node in _module_level_imports(ast.parse(path.read_text()), inside_functions):
            for target in _targets(module, is_package, node, known):
                while target and target not in known:  # a name inside a module: that module
                    target = target.rpartition(".")[0]
                if not target.startswith("tapegrad") or target == module:
                    continue
                edges.add(target)
                # the packages above the target run first (the root package is the importer's
                # own, loaded before anything else, so it adds nothing)
                parent = target.rpartition(".")[0]
                while parent and parent != "tapegrad" and not module.startswith(parent + "."):
                    if parent != module:
                        edges.add(parent)
                    parent = parent.rpartition(".")[0]
        graph[module] = edges
    return graph


def layer_of(module: str) -> int | None:
    """The index in LAYERS of the layer whose longest pattern matches ``module``."""
    best: tuple[int, int] | None = None  # (pattern length, layer)
    for index, (_, patterns) in enumerate(LAYERS):
        for pattern in patterns:
            matches = fnmatch.fnmatchcase(module, pattern) or (
                pattern.endswith(".*") and module == pattern[:-2])
            if matches and (best is None or len(pattern) > best[0]):
                best = (len(pattern), index)
    return None if best is None else best[1]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of the graph with more than one module (Tarjan's
    algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
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
                    found.append(sorted(component))
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_every_module_sits_in_a_layer(graph):
    assert [m for m in graph if layer_of(m) is None] == []


def test_imports_go_only_down(graph):
    upward = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            below, above = layer_of(module), layer_of(target)
            if below is not None and above is not None and above > below:
                upward.append((module, target, LAYERS[below][0], LAYERS[above][0]))
    unexplained = [f"{m} ({low}) imports {t} ({high})"
                   for m, t, low, high in upward if (m, t) not in EXCEPTIONS]
    assert unexplained == []
    # an exception that no longer happens comes off the list
    still_upward = {(m, t) for m, t, _, _ in upward}
    assert [pair for pair in EXCEPTIONS if pair not in still_upward] == []


def test_import_cycles_stay_small(graph):
    cycles = _cycles(graph)
    assert max((len(c) for c in cycles), default=0) <= 5, cycles


def test_import_cycles_stay_small_counting_imports_inside_functions():
    # an import inside a function is a dependency too: a lower layer that reaches up that way
    # ties the layers into one circle (hooks such as install_above turn such a call around)
    cycles = _cycles(import_graph(inside_functions=True))
    assert max((len(c) for c in cycles), default=0) <= 5, cycles
