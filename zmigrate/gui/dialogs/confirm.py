"""Non-blocking "are you sure?" for actions that stop a transfer."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from ...engine.plan import Plan


def after_stop(plan: Plan | None) -> str:
    """What stopping leaves on the destination, in words."""
    if plan is not None and plan.resumable:
        return ("what was received is kept, so the transfer can be resumed from the "
                "Destination page later")
    return "a partly received dataset is removed"


def ask_to_stop(parent: QWidget, title: str, text: str, stop_label: str,
                on_answer: Callable[[bool], None]) -> QMessageBox:
    """Open a window-modal question whose safe default is to keep going; `on_answer(True)` when
    the user chose to stop. Returns the box (open until answered)."""
    box = QMessageBox(QMessageBox.Icon.Question, title, text,
                      QMessageBox.StandardButton.NoButton, parent)
    stop = box.addButton(stop_label, QMessageBox.ButtonRole.DestructiveRole)
    keep = box.addButton("Keep going", QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(keep)
    box.setEscapeButton(keep)

    def answered(_result: int) -> None:
        on_answer(box.clickedButton() is stop)
        box.deleteLater()

    box.finished.connect(answered)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.open()
    return box
