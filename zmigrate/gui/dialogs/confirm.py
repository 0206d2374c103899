"""Non-blocking "are you sure?" for actions that stop a transfer."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

from ...engine.plan import Plan
from ...engine.tree import TreePlan


def after_stop(plan: Plan | TreePlan | None) -> str:
    """What stopping leaves on the destination, in words."""
    if isinstance(plan, TreePlan):
        return ("the datasets already received stay; " + (
            "what arrived of those in flight is kept, so sending the tree again resumes them"
            if plan.resumable else "those in flight are removed, and sending the tree again "
            "sends them whole"))
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


KEEP_RUNNING = "Keep it running (you can come back to it)"


def ask_keep_or_stop(parent: QWidget, on_answer: Callable[[bool | None], None],
                     note: str = "") -> QMessageBox:
    """Closing while a job its runner owns goes on: keep it running (the default: True), stop
    it (False), or Esc to stay (None); `note`: what its runner's start said (a logout that
    stops it). Returns the box (open until answered)."""
    text = ("The transfer runs on its own: it can go on without this window, and zmigrate "
            "shows it again, with its whole plot, when you open it.")
    if note:
        text += f"\n\nBut {note}."
    box = QMessageBox(QMessageBox.Icon.Question, "A transfer is running", text,
                      QMessageBox.StandardButton.NoButton, parent)
    keep = box.addButton(KEEP_RUNNING, QMessageBox.ButtonRole.AcceptRole)
    stop = box.addButton("Stop it", QMessageBox.ButtonRole.DestructiveRole)
    return ask_three_ways(box, keep, stop, keep, on_answer)


def ask_three_ways(box: QMessageBox, yes: QPushButton, no: QPushButton,
                   default: QPushButton,
                   on_answer: Callable[[bool | None], None]) -> QMessageBox:
    """Open `box` window-modal with a Cancel added (Esc): `on_answer` True for `yes`, False
    for `no`, None for Cancel. Returns the box (open until answered)."""
    stay = box.addButton("Cancel", QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(default)
    box.setEscapeButton(stay)

    def answered(_result: int) -> None:
        clicked = box.clickedButton()
        on_answer(True if clicked is yes else False if clicked is no else None)
        box.deleteLater()

    box.finished.connect(answered)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.open()
    return box
