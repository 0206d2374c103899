"""A task off the GUI thread whose widget is deleted before it answers: the answer is dropped
(a fresh-clone run saw the first page's job survey answer a deleted list, a RuntimeError in the
event loop that failed whichever test ran then)."""

from __future__ import annotations

import threading

import pytest
import shiboken6
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from zmigrate.gui.threads import run_task, tasks

pytestmark = pytest.mark.gui


class _Listener(QWidget):
    def __init__(self) -> None:
        super().__init__()
        self.heard: list[object] = []

    def answered(self, value: object) -> None:
        self.heard.append(value)
        self.setWindowTitle(str(value))  # a deleted widget raises here

    def failed(self, exc: Exception) -> None:
        self.heard.append(exc)
        self.setWindowTitle(str(exc))


@pytest.mark.parametrize("fails", [False, True])
def test_an_answer_for_a_deleted_widget_is_dropped(qtbot: QtBot, fails: bool) -> None:
    release = threading.Event()
    listener = _Listener()

    def work() -> int:
        release.wait(10)
        if fails:
            raise RuntimeError("the host went away")
        return 42

    run_task(work, listener.answered, listener.failed)
    heard = listener.heard
    shiboken6.delete(listener)
    assert not shiboken6.isValid(listener)
    release.set()
    qtbot.waitUntil(lambda: not tasks._ALIVE, timeout=5000)  # answered (and dropped)
    assert heard == []


def test_an_answer_for_a_live_widget_arrives(qtbot: QtBot) -> None:
    listener = _Listener()
    qtbot.addWidget(listener)
    run_task(lambda: 7, listener.answered, listener.failed)
    qtbot.waitUntil(lambda: listener.heard == [7], timeout=5000)
    assert listener.windowTitle() == "7"
