"""Work off the GUI thread: answers come back on it, and a task outliving its window ends
quietly (closing the wizard mid-task printed "Signal source has been deleted")."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from pytestqt.qtbot import QtBot

from zmigrate.gui.threads import run_task

ROOT = Path(__file__).resolve().parents[2]


def test_the_answer_and_the_error_come_back_on_the_gui_thread(qtbot: QtBot) -> None:
    gui = threading.get_ident()
    seen: list[tuple[str, object, bool]] = []
    run_task(lambda: threading.get_ident(),
             lambda r: seen.append(("result", r != gui, threading.get_ident() == gui)),
             lambda e: seen.append(("error", e, False)))

    def fail() -> None:
        raise ValueError("no such pool")

    run_task(fail, lambda r: seen.append(("result", r, False)),
             lambda e: seen.append(("error", str(e), threading.get_ident() == gui)))
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=5000)
    assert sorted(seen, key=str) == [("error", "no such pool", True), ("result", True, True)]


class Tracked:
    """Says on which thread it was let go (a widget let go off the GUI thread is deleted
    there, and Qt's queued clean-up later reaches freed memory)."""

    def __init__(self, ends: list[int]) -> None:
        self.ends = ends

    def __del__(self) -> None:
        self.ends.append(threading.get_ident())


def test_what_a_task_refers_to_is_let_go_on_the_gui_thread(qtbot: QtBot) -> None:
    gui = threading.get_ident()
    ends: list[int] = []
    answers: list[str] = []

    def submit(fails: bool) -> None:
        held = Tracked(ends)  # only the call refers to it, as a page's survey refers to the page

        def work() -> str:
            if fails:
                raise ValueError(f"gone {held}")
            return str(held)

        run_task(work, lambda _r: answers.append("result"), lambda _e: answers.append("error"))

    for i in range(20):
        submit(fails=i % 2 == 1)
    qtbot.waitUntil(lambda: len(answers) == 20 and len(ends) == 20, timeout=10000)
    assert sorted(answers) == ["error"] * 10 + ["result"] * 10
    assert ends == [gui] * 20


def test_a_task_still_running_when_the_window_closes_ends_quietly() -> None:
    script = textwrap.dedent("""
        import time
        from PySide6.QtCore import QTimer
        from PySide6.QtWidgets import QApplication, QWidget
        from zmigrate.gui.threads import run_task
        app = QApplication([])
        page = QWidget()
        run_task(lambda: time.sleep(0.5) or 1, lambda r: page.setWindowTitle(str(r)),
                 lambda e: None)
        QTimer.singleShot(50, app.quit)
        app.exec()
        page.deleteLater()
        del page, app
        time.sleep(1.0)
        print("closed")
    """)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=60, env=env)
    assert r.returncode == 0 and r.stdout.strip() == "closed", r.stderr
    assert "Traceback" not in r.stderr and "has been deleted" not in r.stderr, r.stderr
