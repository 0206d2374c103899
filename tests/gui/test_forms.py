"""The compiled forms are fresh, and every control can be named by a screen reader."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)

from zmigrate.gui.wizard import MigrationWizard

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parents[2]
CONTROLS = (QAbstractButton, QComboBox, QLineEdit, QAbstractSpinBox, QAbstractItemView,
            QPlainTextEdit)


def test_generated_forms_are_fresh() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "packaging" / "gen_qt.py"), "--check"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_form_is_loaded_at_run_time() -> None:
    for path in (ROOT / "zmigrate" / "gui").rglob("*.py"):
        text = path.read_text()
        assert "QUiLoader" not in text and "loadUi" not in text, path


def _unnamed(root: QWidget) -> list[str]:
    missing = []
    for w in root.findChildren(QWidget):
        if not isinstance(w, CONTROLS) or not w.objectName() or w.objectName().startswith("qt_"):
            continue
        if w.parent() is not None and type(w.parent()).__name__ in ("QComboBox", "QSpinBox"):
            continue  # the line edit inside a combo or spin box speaks for its owner
        if not w.accessibleName():
            missing.append(f"{type(w).__name__} {w.objectName()}")
    return missing


def test_every_control_has_an_accessible_name(wizard: MigrationWizard) -> None:
    pages = [wizard.page(i) for i in wizard.pageIds()]
    missing = [name for page in pages for name in _unnamed(page)]
    assert missing == []
    panel = wizard.hosts_page.source
    assert panel.ui.host_combo.accessibleName() == "Source host"
    assert wizard.hosts_page.destination.ui.connect_button.accessibleName() == "Destination connect"


def test_hosts_page_works_from_the_keyboard(wizard: MigrationWizard) -> None:
    """Labels have mnemonics bound to their fields; Tab reaches every field of both sides."""
    panel = wizard.hosts_page.source
    assert panel.ui.host_label.buddy() is panel.ui.host_combo
    assert panel.ui.host_label.text().startswith("&")
    chain = []
    w: QWidget = panel.ui.host_combo
    for _ in range(40):
        chain.append(w.objectName())
        w = w.nextInFocusChain()
    for name in ("host_combo", "user_edit", "port_spin", "auth_combo", "sudo_check",
                 "connect_button"):
        assert name in chain
