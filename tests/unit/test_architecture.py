"""The house rules: the engine has no face, the CLI launches the GUI only, no import cycles.

Read from the source (ast), so a rule breaks here before it breaks an install without Qt.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import zmigrate

PACKAGE = Path(zmigrate.__file__).parent
QT_ROOTS = ("PySide6", "pyqtgraph", "shiboken6", "superqt")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(room: str = "") -> dict[str, Path]:
    base = PACKAGE / room if room else PACKAGE
    return {module_name(p): p for p in sorted(base.rglob("*.py")) if "generated" not in p.parts}


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports(path: Path, *, top_level_only: bool = False, typing: bool = False) -> list[str]:
    """Absolute names of the zmigrate modules (or packages) `path` imports at run time (and,
    with `typing`, for the type checker only)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    known = set(modules())
    found: list[str] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_checking_only(child) and not typing:
                continue
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import) and not (top_level_only and in_function):
                found.extend(a.name for a in child.names if a.name.startswith("zmigrate"))
            elif isinstance(child, ast.ImportFrom) and not (top_level_only and in_function):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - child.level + 1]
                    origin = ".".join(base + ([child.module] if child.module else []))
                else:
                    origin = child.module or ""
                if not origin.startswith("zmigrate"):
                    continue
                for alias in child.names:
                    sub = f"{origin}.{alias.name}"
                    found.append(sub if sub in known else origin)
            visit(child, nested)

    visit(ast.parse(path.read_text()), False)
    return found


def test_the_three_rooms_exist() -> None:
    rooms = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert rooms == {"engine", "cli", "gui"}
    loose = {p.stem for p in PACKAGE.glob("*.py")}
    assert loose == {"__init__", "__main__"}


def test_engine_imports_neither_cli_nor_gui() -> None:
    bad = {name: dep for name, path in modules("engine").items() for dep in imports(path)
           if dep.startswith(("zmigrate.cli", "zmigrate.gui"))}
    assert bad == {}


def test_cli_imports_the_gui_only_to_launch_it() -> None:
    """Only inside functions of cli.main (to open the wizard or the self-test), never on import."""
    top = {name: dep for name, path in modules("cli").items()
           for dep in imports(path, top_level_only=True) if dep.startswith("zmigrate.gui")}
    assert top == {}
    anywhere = {name for name, path in modules("cli").items()
                if any(d.startswith("zmigrate.gui") for d in imports(path))}
    assert anywhere <= {"zmigrate.cli.main"}


def _with_packages(name: str, deps: list[str]) -> set[str]:
    """`deps` and the packages whose __init__ importing them runs first: importing
    zmigrate.engine.history.records runs zmigrate.engine.history's __init__ (unless `name`
    lives inside that package, which then has begun already)."""
    out = set(deps)
    for dep in deps:
        parts = dep.split(".")
        for k in range(2, len(parts)):
            package = ".".join(parts[:k])
            if not (name == package or name.startswith(package + ".")):
                out.add(package)
    out.discard(name)
    return out


def _cycles(*, typing: bool) -> list[list[str]]:
    known = set(modules())
    graph = {name: {d for d in _with_packages(name, imports(path, typing=typing)) if d in known}
             for name, path in modules().items()}
    # A package's __init__ runs before its modules; an edge to a package is an edge to __init__.
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                cycles.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                walk(dep)
        stack.pop()
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            walk(name)
    return cycles


def test_no_import_cycles() -> None:
    assert _cycles(typing=False) == []


def test_no_import_cycles_even_for_the_type_checker() -> None:
    """A circle that only `if TYPE_CHECKING:` hides is still a circle in the design."""
    assert _cycles(typing=True) == []


def test_engine_and_cli_import_without_qt() -> None:
    names = sorted(set(modules("engine")) | set(modules("cli")))
    assert {"zmigrate.engine.job", "zmigrate.engine.job.step.pipeline", "zmigrate.cli.main",
            "zmigrate.cli.send", "zmigrate.engine.doctor", "zmigrate.engine.history"} <= set(names)
    code = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        f"qt = sorted(m for m in sys.modules if m.split('.')[0] in {QT_ROOTS!r} "
        "or m.startswith('zmigrate.gui'))\n"
        "assert not qt, qt\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_no_shell_true_outside_tests_and_bench() -> None:
    """Commands are argv lists or lines built by shell.join; never a shell=True of our own."""
    offenders = [str(p) for p in PACKAGE.rglob("*.py")
                 if "generated" not in p.parts and "shell=True" in p.read_text()]
    assert offenders == []


_TRANSPORT_NAMES = {"tcp", "ssh", "relay", "local"}


def _names_in(side: ast.expr) -> set[str]:
    """The string constants a comparison's side is, or holds (`x in ("ssh", "relay")`)."""
    items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
    return {e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)}


def _compares_with_transport_member(node: ast.AST) -> bool:
    """`x is Transport.TCP`, `x == Transport.SSH.value`, `x in (Transport.LOCAL, ...)`, and
    the same by name: `path == "tcp"`, `f.word("transport") in ("ssh", "relay")` (a name
    that is also a property source or a doctor stage, "local" or "ssh", counts when the other
    side speaks of a transport or a path); and a choice between transports written inline,
    `"local" if same else "tcp"` or `Transport.LOCAL if same else Transport.TCP` (the default
    is transports.chosen's)."""
    if isinstance(node, ast.IfExp):
        return _chooses_a_transport(node)
    if not isinstance(node, ast.Compare):
        return False
    sides = [node.left, *node.comparators]
    if any("Transport." in ast.unparse(side) for side in sides):
        return True
    named = set().union(*(_names_in(side) for side in sides)) & _TRANSPORT_NAMES
    about = " ".join(ast.unparse(side) for side in sides).lower()
    return bool(named & {"tcp", "relay"}) or (bool(named) and ("transport" in about
                                                               or "path" in about))


def _chooses_a_transport(node: ast.IfExp) -> bool:
    """`a if test else b` whose branches are Transport members or transport names (two of
    them, or one that is only ever a transport: tcp, relay)."""
    branches = (node.body, node.orelse)
    if any("Transport." in ast.unparse(branch) for branch in branches):
        return True
    named = [_names_in(branch) & _TRANSPORT_NAMES for branch in branches]
    return all(named) or bool(set().union(*named) & {"tcp", "relay"})


def test_only_the_transports_room_branches_on_a_transport() -> None:
    """Outside engine/transports/, code asks the transport's carrier; it never compares with a
    Transport member or its name (adding a transport then touches its own module, not every
    room)."""
    room = PACKAGE / "engine" / "transports"
    found = sorted(
        f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {ast.unparse(node)}"
        for path in modules().values() if room not in path.parents
        for node in ast.walk(ast.parse(path.read_text()))
        if _compares_with_transport_member(node)
    )
    assert found == []


def test_the_transport_rule_sees_a_comparison() -> None:
    """The rule above catches what it is meant to (so an empty finding means something)."""
    for line in ("t is Transport.TCP", "t == Transport.SSH.value", "t in (Transport.LOCAL,)",
                 "Transport.RELAY != t", 'path == "tcp"', 'transport == "ssh"',
                 'f.word("transport") in ("ssh", "relay")', 'mode != "relay"',
                 '"local" if same else "tcp"', 'Transport.LOCAL if same else Transport.TCP',
                 '"ssh" if jump else "local"', '"tcp" if transport == "" else None'):
        assert _compares_with_transport_member(ast.parse(line).body[0].value), line  # type: ignore[attr-defined]
    for line in ("t = Transport.TCP", 'entry.host == "local"', 'stage == "ssh"',
                 'src.source in ("local", "received")', '"local" if h.is_local else h.label'):
        node = ast.parse(line).body[0]
        assert not _compares_with_transport_member(getattr(node, "value", node)), line


def test_test_modules_outside_packages_have_unique_names() -> None:
    """pytest's default import mode imports a test folder without __init__.py by basename: two
    `test_x.py` in such folders stop the whole collection ("import file mismatch")."""
    tests = Path(__file__).parents[1]
    seen: dict[str, list[str]] = {}
    for path in tests.rglob("test_*.py"):
        if not (path.parent / "__init__.py").exists():
            seen.setdefault(path.name, []).append(str(path.relative_to(tests)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}


FUNCTION_LINES, CLASS_LINES = 80, 250  # past these a unit usually hides a second job


def test_no_giant_unit() -> None:
    """No function over 80 lines and no class over 250 in the package (generated Qt forms
    aside): the size targets the engine's split reached, kept."""
    found = sorted(
        f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.name} "
        f"({(node.end_lineno or node.lineno) - node.lineno + 1} lines)"
        for path in modules().values() if "generated" not in path.parts
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and (node.end_lineno or node.lineno) - node.lineno + 1
        > (CLASS_LINES if isinstance(node, ast.ClassDef) else FUNCTION_LINES))
    assert found == []


MODULES_PER_FOLDER = 16  # about 15: past it a folder holds a room that has no door yet


def _folders() -> dict[Path, list[str]]:
    """Each folder of the package (generated forms aside) -> its modules' names, __init__ aside."""
    out: dict[Path, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if "generated" not in path.parts and path.stem != "__init__":
            out.setdefault(path.parent, []).append(path.stem)
    return out


def test_no_folder_is_too_wide() -> None:
    """A folder past ~15 modules is a room that grew sideways: its families become packages."""
    wide = {str(folder.relative_to(PACKAGE.parent)): len(names)
            for folder, names in _folders().items() if len(names) > MODULES_PER_FOLDER}
    assert wide == {}


def _families(names: list[str]) -> dict[str, list[str]]:
    """Prefixes shared by three or more of `names` (the bare prefix counts: `tree` + 2 more)."""
    prefixes: dict[str, list[str]] = {}
    for name in names:
        if "_" in name:
            prefixes.setdefault(name.split("_")[0], []).append(name)
    return {p: sorted(m) for p, m in prefixes.items() if len(m) + (p in names) >= 3}


def test_no_family_of_prefixed_siblings() -> None:
    """Three or more modules sharing a name prefix (`tree_plan`, `tree_checks`, `tree_jobs`) are
    a package without its folder: they move into one, with a front door."""
    found = {f"{folder.relative_to(PACKAGE.parent)}/{prefix}*": members
             for folder, names in _folders().items()
             for prefix, members in _families(names).items()}
    assert found == {}


def test_the_folder_rules_see_a_family() -> None:
    """The prefix rule itself, on the engine's old layout."""
    assert _families(["tree", "tree_plan", "tree_checks", "job", "job_checks", "units"]) == {
        "tree": ["tree_checks", "tree_plan"]}
