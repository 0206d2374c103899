#!/usr/bin/env python3
"""Compile the Designer forms in ui/ into zmigrate/gui/generated/ui_*.py with pyside6-uic.

Usage:
    python packaging/gen_qt.py           regenerate every module
    python packaging/gen_qt.py --check   exit 1 if a module is missing, stale or orphaned
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UI_DIR = ROOT / "ui"
OUT_DIR = ROOT / "zmigrate" / "gui" / "generated"
INIT_TEXT = '"""Modules compiled from ui/*.ui by packaging/gen_qt.py: never edit them by hand."""\n'


def uic_program() -> str:
    """pyside6-uic next to this Python first (same PySide6 version), then on the PATH."""
    beside = Path(sys.executable).parent / "pyside6-uic"
    if beside.is_file():
        return str(beside)
    found = shutil.which("pyside6-uic")
    if found is None:
        sys.exit("pyside6-uic not found: pip install PySide6")
    return found


def module_name(form: Path) -> str:
    return f"ui_{form.stem}.py"


def compile_all(out_dir: Path) -> list[str]:
    """Compile every form into `out_dir`; return the module file names written."""
    uic = uic_program()
    out_dir.mkdir(parents=True, exist_ok=True)
    names = []
    for form in sorted(UI_DIR.glob("*.ui")):
        target = out_dir / module_name(form)
        subprocess.run([uic, "--from-imports", "-o", str(target), str(form)], check=True)
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
        for path in sorted(OUT_DIR.glob("ui_*.py")):
            if path.name not in names:
                problems.append(f"orphaned (no ui/ form): {path.relative_to(ROOT)}")
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
