"""The Done page's side of jobs a runner keeps in sync (engine/runner/keep.py): the line saying
when the copy was last synced and what a final sync would cost now, *Keep in sync* (asks the
interval), and which of Sync again / Final sync apply to the job the page followed."""

from __future__ import annotations

import contextlib
import time

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QInputDialog, QLabel, QLineEdit, QPushButton, QWidget

from ...engine import runner
from ...engine.errors import ZmigrateError
from ...engine.runner.keep import Keep, describe, parse_interval
from ...engine.runner.state import Status
from .. import markup, style
from ..generated.ui_done_page import Ui_DonePage
from ..session import Session

REFRESH_MS = 5000  # the line, read again this often while the job keeps the copy in sync
DEFAULT_INTERVAL = "15m"


def followed_status(s: Session) -> Status | None:
    """The status of the runner's job the Transfer page followed last (None: none)."""
    if s.followed is None:
        return None
    with contextlib.suppress(OSError, ZmigrateError, ValueError, KeyError):
        return runner.status(s.followed)
    return None


def kept_running(s: Session) -> Keep | None:
    """The followed job's keep-in-sync state while it still repeats (its final sync not yet
    asked); None otherwise."""
    status = followed_status(s)
    if status is None or status.state.final:
        return None
    keep = Keep.of(status)
    return keep if keep is not None and not keep.final else None


class KeepControls(QObject):
    """*Keep in sync* and the kept-in-sync line of the Done page.

    Signals:
        keep_requested(interval): keep the same tree in sync every `interval` (`15m`).
    """

    keep_requested = Signal(str)

    def __init__(self, page: QWidget, session: Session, ui: Ui_DonePage) -> None:
        super().__init__(page)
        self.page, self.session = page, session
        self.button: QPushButton = ui.keep_sync_button
        self.again: QPushButton = ui.sync_again_button
        self.label = label = QLabel()
        ui.result_layout.addWidget(label)  # under the outcome's words
        self.dialog: QInputDialog | None = None
        style.set_role(label, "muted")
        label.setWordWrap(True)
        label.setObjectName("keep_label")
        label.hide()
        self.button.clicked.connect(self.ask)
        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.refresh)

    def show_for(self, tree: bool) -> None:
        """The buttons for the transfer just shown (`tree`: Sync again and Final sync
        apply); the line while its job keeps the copy in sync."""
        s = self.session
        self.button.setVisible(tree)
        self.button.setEnabled(s.followed is not None)
        self.button.setToolTip(
            self.button.toolTip().split("\n")[0] + ("" if s.followed is not None else
                                                     "\n(needs a transfer a runner owns: "
                                                     "logins from ~/.ssh/config)"))
        self.refresh()

    def refresh(self) -> None:
        keep = kept_running(self.session)
        kept = keep is not None
        self.again.setEnabled(not kept)  # it syncs on its own
        self.button.setEnabled(not kept and self.session.followed is not None)
        self.button.setText("Keeping in sync" if kept else "&Keep in sync…")
        self.label.setVisible(kept)
        if keep is None:
            self.timer.stop()
            return
        self.label.setText("<b>Kept in sync:</b> " + markup.escape(
            describe(keep, time.time())) + ". <i>Final sync</i> stops the "
            "repetition and cuts over.")
        if not self.timer.isActive():
            self.timer.start()

    def ask(self) -> None:
        """The interval, asked without blocking (`dialog` answers in tests)."""
        if self.dialog is not None:
            return
        d = QInputDialog(self.page)
        d.setObjectName("keep_dialog")
        d.setWindowTitle("Keep in sync")
        d.setLabelText("Repeat the catch-up every (30s, 15m, 1h):")
        d.setTextEchoMode(QLineEdit.EchoMode.Normal)
        d.setTextValue(DEFAULT_INTERVAL)
        d.textValueSelected.connect(self._chosen)
        d.finished.connect(self._closed)
        self.dialog = d
        d.open()

    def _closed(self, _result: int) -> None:
        if self.dialog is not None:
            self.dialog.deleteLater()
        self.dialog = None

    def _chosen(self, text: str) -> None:
        try:
            parse_interval(text)
        except ZmigrateError as exc:
            self.label.setText(markup.error_html(exc))
            self.label.show()
            return
        self.keep_requested.emit(text.strip())

    def stop(self) -> None:
        self.timer.stop()
