"""The Done page's kept-in-sync line reads a runner host's job (a login each time) only while
Done is shown: left for another page, its timer stops and reads nothing more."""

from __future__ import annotations

from PySide6.QtWidgets import QWizardPage
from pytestqt.qtbot import QtBot

from zmigrate.engine.runner.remote import Pointer
from zmigrate.gui.generated.ui_done_page import Ui_DonePage
from zmigrate.gui.jobs.kept import KeepControls
from zmigrate.gui.session import Session


def test_the_timer_stops_and_reads_nothing_once_done_is_left(qtbot: QtBot) -> None:
    page = QWizardPage()
    qtbot.addWidget(page)
    ui = Ui_DonePage()
    ui.setupUi(page)  # type: ignore[no-untyped-call]
    session = Session()
    session.followed_remote = Pointer("0123abcd", "runner.invalid", "/usr/bin/zmigrate",
                                      "a tree", 0.0)
    keep = KeepControls(page, session, ui)
    keep.timer.start()
    assert not page.isVisible()  # another page is shown
    keep.timer.timeout.emit()
    assert not keep.timer.isActive()
    assert keep.reading is None  # no login to runner.invalid was started
