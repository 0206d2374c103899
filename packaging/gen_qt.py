#!/usr/bin/env python3
"""Compile ui/*.ui (pyside6-uic) and ui/*.qrc (pyside6-rcc) into zmigrate/gui/generated/.

Forms become ui_<name>.py, resource collections <name>_rc.py. The compiler's version line is
dropped from the output, so the committed modules do not depend on the PySide6 patch release.
Resources are written in rcc format 1 without compression: no file times, byte-stable output.

Usage:
    python packaging/gen_qt.py           regenerate every module
    python packaging/gen_qt.py --check   exit 1 if a module is missing, stale or orphaned
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UI_DIR = ROOT / "ui"
OUT_DIR = ROOT / "zmigrate" / "gui" / "generated"
INIT_TEXT = '"""Modules compiled from ui/ by packaging/gen_qt.py: never edit them by hand."""\n'
# "## Created by: Qt User Interface Compiler version 6.11.3" and rcc's "# Created by: ..."
_VERSION_LINE = re.compile(r"^#+ Created by: .*(Compiler|Qt) version .*\n", re.MULTILINE)


def qt_program(name: str) -> str:
    """pyside6-<tool> next to this Python first (same PySide6 version), then on the PATH."""
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        sys.exit(f"{name} not found: pip install PySide6")
    return found


def module_name(source: Path) -> str:
    return f"ui_{source.stem}.py" if source.suffix == ".ui" else f"{source.stem}_rc.py"


def _normalise(path: Path) -> None:
    path.write_text(_VERSION_LINE.sub("", path.read_text()))


def compile_all(out_dir: Path) -> list[str]:
    """Compile every form and resource collection into `out_dir`; return the names written."""
    uic, rcc = qt_program("pyside6-uic"), qt_program("pyside6-rcc")
    out_dir.mkdir(parents=True, exist_ok=True)
    names = []
    for form in sorted(UI_DIR.glob("*.ui")):
        target = out_dir / module_name(form)
        subprocess.run([uic, "--from-imports", "-o", str(target), str(form)], check=True)
        _normalise(target)
        names.append(target.name)
    for qrc in sorted(UI_DIR.glob("*.qrc")):
        target = out_dir / module_name(qrc)
        subprocess.run([rcc, "-g", "python", "--no-compress", "--format-version", "1",
                        "-o", str(target), str(qrc)], check=True, cwd=UI_DIR)
        _normalise(target)
        names.append(target.name)
    (out_dir / "__init__.py").write_text(INIT_TEXT)
    return names


def check() -> int:
    """Compare freshly compiled modules with the committed ones."""
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp)
        names = set(compile_all(fresh)) | {"__init__.py"}
        for name in sorted(names):
            committed = OUT_DIR / name
            if not committed.is_file():
                problems.append(f"missing: {committed.relative_to(ROOT)}")
            elif committed.read_text() != (fresh / name).read_text():
                problems.append(f"stale: {committed.relative_to(ROOT)}")
        for path in sorted([*OUT_DIR.glob("ui_*.py"), *OUT_DIR.glob("*_rc.py")]):
            if path.name not in names:
                problems.append(f"orphaned (no ui/ source): {path.relative_to(ROOT)}")
    for p in problems:
        print(p)
    if problems:
        print("run: python packaging/gen_qt.py")
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if generated code is stale")
    args = parser.parse_args(argv)
    if args.check:
        return check()
    for name in compile_all(OUT_DIR):
        print(f"wrote zmigrate/gui/generated/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
