"""Before a doctor run with the write test: the test datasets earlier runs left on the
destination, named and destroyed with this run's own only if the user says so."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from ...engine import plain_words
from ...engine.doctor import DoctorReport
from ...engine.losses import Loss
from .. import markup
from ..threads import run_task
from .confirm import ask_three_ways


class DoctorLike(Protocol):
    clear_leftovers: frozenset[str]

    def named_losses(self) -> tuple[Loss, ...]: ...

    def run(self) -> DoctorReport: ...

    def cancel(self) -> None: ...


def name_leftovers_first(parent: QWidget, doctor: DoctorLike, host: str,
                         stopping: Callable[[], bool], start: Callable[[DoctorLike], None],
                         not_run: Callable[[], None],
                         failed: Callable[[Exception], None]) -> None:
    """Look for what the run would destroy (off the GUI thread); where earlier runs left
    datasets, ask about them by name first. Then `start` the doctor (their destruction agreed
    or not), or `not_run` where the user cancelled."""

    def found(lost: tuple[Loss, ...]) -> None:
        left = lost[1:]  # the first is this run's own test dataset
        if stopping() or not left:
            start(doctor)
            return

        def answered(destroy: bool | None) -> None:
            if destroy is None:
                not_run()
                return
            doctor.clear_leftovers = frozenset(x.name for x in left) if destroy else frozenset()
            start(doctor)

        ask_leftovers(parent, host, left, answered)

    run_task(doctor.named_losses, found, failed)


def ask_leftovers(parent: QWidget, host: str, left: tuple[Loss, ...],
                  on_answer: Callable[[bool | None], None]) -> QMessageBox:
    """The datasets `left` on `host`, each by name: destroy them with this run's own (True),
    keep them (False, the default), or Cancel/Esc: do not run (None)."""
    names = "".join(f"<li>{markup.escape(plain_words.loss(x))}</li>" for x in left)
    box = QMessageBox(QMessageBox.Icon.Question, "Datasets earlier doctor runs left",
                      f"Earlier doctor runs were stopped before they cleaned up on "
                      f"{markup.escape(host)}:<ul>{names}</ul>Destroy them with this run's own "
                      "test dataset? Each is destroyed only while it is still the dataset found "
                      "now (the same guid).", QMessageBox.StandardButton.NoButton, parent)
    box.setObjectName("leftovers_box")
    box.setTextFormat(Qt.TextFormat.RichText)
    destroy = box.addButton("Destroy them too", QMessageBox.ButtonRole.DestructiveRole)
    keep = box.addButton("Keep them", QMessageBox.ButtonRole.AcceptRole)
    return ask_three_ways(box, destroy, keep, keep, on_answer)
