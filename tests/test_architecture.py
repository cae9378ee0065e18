"""The shape of the code, held by a test: imports point down the layers, nothing imports in a
circle, and no module or test reaches into another package's private (underscore) module.

Why a test: the layering in ARCHITECTURE.md (cli > studies > apps > policies > calibrate >
engines | sim > workloads > crypto > profiles > the base modules) is what lets a reader find a
concept in one obvious place and lets optional back ends stay optional. It erodes one
convenient import at a time; a failing test names the import to move.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import cryptoffload

SRC = Path(cryptoffload.__file__).resolve().parent

# rank of each top-level part of the package; a part imports only parts of lower rank, or itself.
# engines and sim share a rank and must not import each other.
RANKS = {
    "cli": 9,
    # the public Python API: a facade over crypto, apps, studies and policies, so above them all;
    # the CLI may use it. The package root names its modules lazily (see the test below).
    "api": 8.5,
    "studies": 8,
    "apps": 7,
    "policies": 6,
    "calibrate": 5,
    "engines": 4,
    "sim": 4,
    "workloads": 3,
    "crypto": 2,
    "profiles": 1,
    # rank 0, the base library every layer may use, ordered inside itself: errors below all,
    # report (a leaf library the studies and the CLI call) above the rest.
    "errors": 0.0, "lru": 0.05, "papers": 0.1, "cuda": 0.15, "machine": 0.2, "checks": 0.3, "io": 0.4, "procfs": 0.42, "private_files": 0.45, "owned_tmp": 0.47,
    "bench": 0.5,
    "report": 0.9,
    "__init__": 0.0,
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _walk(tree: ast.AST):
    """Every node, except the bodies of ``if TYPE_CHECKING:`` (names for annotations only,
    never imported when the program runs)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                todo.extend(child.orelse)
            else:
                todo.append(child)


def _imports(path: Path) -> list[tuple[str, int]]:
    """Every cryptoffload module imported by the file when it runs (at any depth: lazy imports
    inside functions count, annotation-only imports under ``TYPE_CHECKING`` do not)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in _walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "cryptoffload"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "cryptoffload":
                continue
            # "from cryptoffload.x import y" may import the submodule y
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                found.append((sub if _exists(sub) else mod, node.lineno))
    return found


def _exists(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (SRC / rel).with_suffix(".py").is_file() or (SRC / rel / "__init__.py").is_file()


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _files() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_part_has_a_rank():
    parts = {_part(_module_name(p)) for p in _files()}
    assert not parts - set(RANKS), f"add these to RANKS (and ARCHITECTURE.md): {sorted(parts - set(RANKS))}"


def test_imports_point_down_the_layers():
    upward = []
    for path in _files():
        src_part = _part(_module_name(path))
        for target, line in _imports(path):
            dst_part = _part(target)
            if dst_part == src_part or dst_part == "__init__":  # the package root holds only __version__
                continue
            if RANKS[dst_part] >= RANKS[src_part]:
                upward.append(f"{path.relative_to(SRC)}:{line} imports {target} "
                              f"({src_part} rank {RANKS[src_part]} -> {dst_part} rank {RANKS[dst_part]})")
    assert not upward, "imports that do not point down the layers:\n" + "\n".join(upward)


def test_no_import_cycles():
    graph: dict[str, set[str]] = defaultdict(set)
    for path in _files():
        src = _module_name(path)
        for target, _line in _imports(path):
            if target != src and not src.startswith(target + "."):  # a package's own __init__ is not a cycle
                graph[src].add(target)
    cycles = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_no_module_over_700_lines():
    long = [f"{p.relative_to(SRC)}: {n} lines" for p in _files()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 700]
    assert not long, "split these modules (one concept per file):\n" + "\n".join(long)


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_no_function_over_80_lines():
    """One step per function: a function over 80 lines is several functions that have no names
    yet (ARCHITECTURE.md); split it by concept, not by line count."""
    long = [f"{p.relative_to(SRC)}:{f.lineno} {f.name}: {f.end_lineno - f.lineno + 1} lines"
            for p in _files() for f in _functions(ast.parse(p.read_text(encoding="utf-8")))
            if f.end_lineno is not None and f.end_lineno - f.lineno + 1 > 80]
    assert not long, "split these functions (one step each):\n" + "\n".join(long)


def test_no_section_banner_inside_a_function():
    """A ``# -- Table 2 ---`` banner inside a function marks a function that is missing."""
    found = []
    for p in _files():
        lines = p.read_text(encoding="utf-8").splitlines()
        for f in _functions(ast.parse("\n".join(lines))):
            body = lines[f.lineno:f.end_lineno or f.lineno]
            found += [f"{p.relative_to(SRC)}:{f.lineno + i + 1} in {f.name}" for i, line in enumerate(body)
                      if _is_banner(line.strip())]
    assert not found, "name these sections as functions:\n" + "\n".join(found)


def _is_banner(line: str) -> bool:
    return line.startswith("# --") or line.startswith("# ==") or (line.startswith("#") and line.endswith("----"))


def test_the_package_root_reaches_the_api_only_lazily():
    """``cryptoffload/__init__.py`` is rank 0 and imports nothing above it; the API's modules
    are attributes it resolves on first use (PEP 562), one ``importlib`` call for exactly the
    names in ``API_MODULES``, each a module of ``cryptoffload.api``. ``import cryptoffload``
    loads none of them (nor any other layer)."""
    import subprocess
    import sys

    root = SRC / "__init__.py"
    assert not [t for t, _ in _imports(root)], "the package root imports a module of the package at run time"
    assert set(cryptoffload.API_MODULES) == {p.stem for p in (SRC / "api").glob("*.py") if p.stem != "__init__"}
    code = ("import sys, cryptoffload; loaded = [m for m in sys.modules if m.startswith('cryptoffload.')]; "
            "assert not loaded, loaded; from cryptoffload import paillier; "
            "assert paillier.__name__ == 'cryptoffload.api.paillier'")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


# -- private modules -------------------------------------------------------------------------
# A module whose name (or a package above it) starts with "_" is its package's business: what
# another package needs of it belongs in a public module (issue 36). Tests mirror src/
# (tests/apps/ridge/test_x.py is at home in cryptoffload.apps.ridge), so a test may use the
# private modules of the package it mirrors and of the packages above that one; a module of the
# package those of its own package and the packages above it (engines/ uses crypto/native.py,
# not crypto/_native/). tests/benchmarks/ mirror benchmarks/, scripts that time the internals themselves
# (the C core, the kernels): they are not held to it.

TESTS = SRC.parent.parent / "tests"


def private_owner(module: str) -> str | None:
    """The package a private module belongs to (``cryptoffload.crypto`` for
    ``cryptoffload.crypto._native.core``); ``None`` for a public module."""
    parts = module.split(".")
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def test_home(path: Path, tests: Path = TESTS) -> str:
    """The package a test file mirrors: ``tests/apps/ridge/test_x.py`` -> ``cryptoffload.apps.ridge``."""
    return ".".join(["cryptoffload", *path.parent.relative_to(tests).parts])


test_home.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


def private_imports(source: str, home: str) -> list[tuple[str, int]]:
    """``(module, line)`` of every private module of another package that ``source`` imports
    (absolute imports, at any depth; a name imported from a package counts when it is a module
    there). ``home`` is the package the file belongs to or mirrors."""
    found = []
    for node in _walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [(f"{node.module}.{a.name}" if _exists(f"{node.module}.{a.name}") else node.module, node.lineno)
                     for a in node.names]
        else:
            continue
        for module, line in names:
            owner = private_owner(module) if module.split(".")[0] == "cryptoffload" else None
            if owner is not None and home != owner and not home.startswith(owner + "."):
                found.append((module, line))
    return sorted(set(found), key=lambda f: (f[1], f[0]))


def test_no_module_imports_another_packages_private_module():
    """Every module of the package (its home: the package it is in) and every test (its home:
    the package it mirrors)."""
    files = [(p, test_home(p)) for p in sorted(TESTS.rglob("*.py"))
             if "__pycache__" not in p.parts and p.relative_to(TESTS).parts[0] != "benchmarks"]
    files += [(p, ".".join(["cryptoffload", *p.parent.relative_to(SRC).parts])) for p in sorted(SRC.rglob("*.py"))
              if "__pycache__" not in p.parts]
    bad = [f"{p.relative_to(SRC.parent.parent)}:{line} imports {module} (a private module of "
           f"{private_owner(module)}; {home} may not use it)"
           for p, home in files for module, line in private_imports(p.read_text(encoding="utf-8"), home)]
    assert not bad, ("what these need belongs in a public module of the right layer:\n" + "\n".join(bad))


def test_the_private_import_rule_flags_a_planted_violation(tmp_path: Path):
    """The rule can fail: a CLI module or a test of another package importing a private module
    is flagged, however it is spelled; the mirrored package's own tests and public modules are not."""
    planted = ("from cryptoffload.apps import _http\n"
               "import cryptoffload.crypto._native.core\n"
               "def f():\n    from cryptoffload.crypto._native.core import cpu_path\n")
    assert [m for m, _ in private_imports(planted, "cryptoffload.cli")] == [
        "cryptoffload.apps._http", "cryptoffload.crypto._native.core", "cryptoffload.crypto._native.core"]
    assert private_imports(planted, "cryptoffload.policies") != []
    assert private_imports(planted, "cryptoffload.apps.ridge")[1:] != []  # crypto's, not apps'
    assert private_imports("from cryptoffload.apps import _http", "cryptoffload.apps.ridge") == []
    assert private_imports("from cryptoffload.crypto._native import core", "cryptoffload.crypto.paillier") == []
    assert private_imports("from cryptoffload.studies.isc_he_cnn import tables", "cryptoffload.cli") == []
    assert private_imports("from cryptoffload.apps.ridge.provider import _batch_bounds",
                           "cryptoffload.cli") == []  # a private function is the test's business, not a module
    test = tmp_path / "tests" / "cli" / "test_x.py"
    test.parent.mkdir(parents=True)
    assert test_home(test, tmp_path / "tests") == "cryptoffload.cli"
