"""The package's shape, checked: imports only go down the layers, modules and functions stay small,
and the engine knows no system by name.

Layers, lowest first (a module may import its own layer and those below it):

0  trnsim/*.py            errors, units, limits, YAML reading, atomic files
1  trnsim/spec            the topology file: schema, catalog, what-if edits
2  trnsim/topology        the built system: graph, builders, trays, faults, groups, metrics
3  trnsim/routing         paths and link loads of flows: BFS, ECMP, single, hashed, symmetry
4  trnsim/collectives     ops and schedules: what each algorithm sends
5  trnsim/model           routed schedules costed at every size, bounds, concurrency, clusters
6  trnsim/studies         variants, sweeps, baselines, faults, layouts, calibration
7  trnsim/outputs         tables, pictures, reports, exported files
8  trnsim/cli             the command line
"""

import ast
import functools
import re
from pathlib import Path

import pytest

import trnsim

PACKAGE = Path(trnsim.__file__).parent
LAYERS = ["", "spec", "topology", "routing", "collectives", "model", "studies", "outputs", "cli"]
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80
# functions allowed past MAX_FUNCTION_LINES, each with the reason it is one function
LONG_FUNCTIONS: dict[str, str] = {}
LONG_MODULES: dict[str, str] = {}
ENGINE = ("topology", "routing", "collectives", "model")


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)


def _layer(module: str) -> int:
    parts = module.split(".")
    if module.endswith("__main__"):
        return len(LAYERS)
    return LAYERS.index(parts[1]) if len(parts) > 2 and parts[1] in LAYERS else 0


def _imports(tree: ast.AST, module: str):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("trnsim"):
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    yield (
                        node.lineno,
                        full
                        if (PACKAGE.parent / full.replace(".", "/")).exists()
                        or (PACKAGE.parent / (full.replace(".", "/") + ".py")).exists()
                        else node.module,
                    )
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("trnsim"):
                    yield node.lineno, alias.name


MODULES = list(_modules())


@pytest.mark.parametrize(("path", "module"), MODULES, ids=[m for _, m in MODULES])
def test_imports_only_go_down(path, module):
    tree = ast.parse(path.read_text())
    mine = _layer(module)
    upward = [
        f"line {line}: {target} (layer {_layer(target)})"
        for line, target in _imports(tree, module)
        if _layer(target) > mine
    ]
    assert not upward, f"{module} (layer {mine}) imports upward: " + "; ".join(upward)


@pytest.mark.parametrize(("path", "module"), MODULES, ids=[m for _, m in MODULES])
def test_modules_do_one_job(path, module):
    lines = len(path.read_text().splitlines())
    if module in LONG_MODULES:
        return
    assert lines <= MAX_MODULE_LINES, (
        f"{module} has {lines} lines (at most {MAX_MODULE_LINES}): split its jobs"
    )


def _functions(tree: ast.AST, prefix: str = ""):
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{prefix}{node.name}"
            yield name, node
            yield from _functions(node, f"{name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")


@pytest.mark.parametrize(("path", "module"), MODULES, ids=[m for _, m in MODULES])
def test_functions_are_short(path, module):
    long = []
    for name, node in _functions(ast.parse(path.read_text())):
        # the body, without the docstring: a long explanation is not a long function
        body = node.body[1:] if ast.get_docstring(node) is not None and len(node.body) > 1 else node.body
        length = body[-1].end_lineno - body[0].lineno + 1
        if length > MAX_FUNCTION_LINES and f"{module}.{name}" not in LONG_FUNCTIONS:
            long.append(f"{name} ({length} lines)")
    assert not long, f"{module}: functions over {MAX_FUNCTION_LINES} lines: " + ", ".join(long)


def _system_names() -> set[str]:
    from trnsim.spec.catalog import catalog_files, catalog_names

    return {name.lower() for path in catalog_files() for name in catalog_names(path)}


@pytest.mark.parametrize(
    ("path", "module"),
    [(p, m) for p, m in MODULES if m.split(".")[1] in ENGINE],
    ids=[m for p, m in MODULES if m.split(".")[1] in ENGINE],
)
def test_the_engine_knows_no_system_by_name(path, module):
    """Nothing in topology/, routing/, collectives/ or model/ is written for one catalog system (a
    docstring may name one as an example; code and messages may not)."""
    names = _system_names()
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and ast.get_docstring(node) is not None
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in docstrings:
            continue
        words = []
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            words = [w.strip(".,;:()'\"") for w in node.value.lower().split()]
        elif isinstance(node, ast.Name):
            words = [node.id.lower()]
        found |= {w for w in words if w in names}
    assert not found, f"{module} names catalog systems: {sorted(found)}"


def _graph() -> dict[str, set[str]]:
    modules: dict[str, set[str]] = {}
    for path, module in MODULES:
        name = module.removesuffix(".__init__")
        modules[name] = {target for _, target in _imports(ast.parse(path.read_text()), module)}
    packages = {name for name in modules if (PACKAGE.parent / name.replace(".", "/")).is_dir()}
    # a package's __init__ only re-exports its modules: edges to and from packages are not cycles
    return {
        name: {dep for dep in deps if dep in modules and dep != name and dep not in packages}
        for name, deps in modules.items()
        if name not in packages
    }


def test_no_import_cycles():
    """Not even inside one layer, and not even through imports inside functions."""
    graph = _graph()
    state: dict[str, int] = {}
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycles.append(path[path.index(dep) :] + [dep])
            elif dep not in state:
                visit(dep, [*path, dep])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, cycles


# string constants (not docstrings) that may still name a flag, each with why and until when
FLAG_NAMING_PENDING: dict[str, str] = {}
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


@functools.cache
def _cli_flags() -> frozenset[str]:
    """Every option name of every trnsim command (``--alpha-us``, ``--fail``, ``--help``, ...)."""

    from trnsim.cli.app import command_tree

    flags: set[str] = set()

    def walk(command) -> None:
        for param in command.params:
            flags.update(opt for opt in (*param.opts, *param.secondary_opts) if opt.startswith("--"))
        for sub in getattr(command, "commands", {}).values():
            walk(sub)

    walk(command_tree())
    return frozenset(flags)


def _strings_outside_docstrings(tree: ast.AST, prefix: str):
    """Each string constant of the code (an f-string's literal parts too) with the function it is in."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and ast.get_docstring(node) is not None
    }

    def visit(node: ast.AST, where: str):
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{where}.{child.name}"
            if (
                isinstance(child, ast.Constant)
                and isinstance(child.value, str)
                and id(child) not in docstrings
            ):
                yield inner, child.lineno, child.value
            yield from visit(child, inner)

    yield from visit(tree, prefix)


@pytest.mark.parametrize(
    ("path", "module"),
    [(p, m) for p, m in MODULES if m.split(".")[1] != "cli"],
    ids=[m for p, m in MODULES if m.split(".")[1] != "cli"],
)
def test_the_library_names_no_command_line_flag(path, module):
    """Below trnsim/cli/ a message names the library's parameter (``{alpha_us}``, shown by the CLI
    as ``--alpha-us``: trnsim.cli.flags), never the flag: a library caller has no flags. Other
    tools' flags (nccom-test's ``--nworkers``) are not trnsim's and may be named; a docstring may
    explain the mapping."""
    flags = _cli_flags()
    found = []
    for where, line, text in _strings_outside_docstrings(ast.parse(path.read_text()), module):
        named = sorted({flag for flag in _FLAG.findall(text) if flag in flags})
        if named and not any(where == p or where.startswith(p + ".") for p in FLAG_NAMING_PENDING):
            found.append(f"line {line}: {text!r} names {', '.join(named)}")
    assert not found, f"{module} names command-line flags: " + "; ".join(found)
