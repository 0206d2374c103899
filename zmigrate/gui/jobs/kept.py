"""The Done page's side of jobs a runner keeps in sync (engine/runner/keep.py): the line saying
when the copy was last synced and what a final sync would cost now, *Keep in sync* (asks the
interval), and which of Sync again / Final sync apply to the job the page followed. A job on a
runner host is read there off the GUI thread (gui/threads), as its first page does."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QInputDialog, QLabel, QLineEdit, QPushButton, QWidget

from ...engine import runner
from ...engine.errors import ZmigrateError
from ...engine.runner import elsewhere
from ...engine.runner.keep import Keep, describe, parse_interval
from ...engine.runner.remote import Pointer
from ...engine.runner.state import Status
from .. import markup, style
from ..generated.ui_done_page import Ui_DonePage
from ..session import Session
from ..threads import run_task

REFRESH_MS = 5000  # the line, read again this often while the job keeps the copy in sync
REMOTE_S = 10.0  # ... and from a runner host at most this often (a login each)
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
    asked); None otherwise (a job on a runner host: as last read there)."""
    status = s.remote_status if s.followed_remote is not None else followed_status(s)
    if status is None or status.state.final:
        return None
    keep = Keep.of(status)
    return keep if keep is not None and not keep.final else None


class KeepControls(QObject):
    """*Keep in sync* and the kept-in-sync line of the Done page.

    Signals:
        keep_requested(interval): keep the same tree in sync every `interval` (`15m`).
        remote_read(): the followed job on a runner host was read there again.
    """

    keep_requested = Signal(str)
    remote_read = Signal()

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
        self.timer.timeout.connect(self._tick)
        self.reading: Pointer | None = None  # the runner host's job being read now
        self.read_at = -REMOTE_S

    def show_for(self, tree: bool) -> None:
        """The buttons for the transfer just shown (`tree`: Sync again and Final sync
        apply); the line while its job keeps the copy in sync."""
        s = self.session
        self.button.setVisible(tree)
        self.button.setToolTip(
            self.button.toolTip().split("\n")[0] + ("" if self._repeatable() else
                                                     "\n(needs a transfer a runner owns: "
                                                     "logins from ~/.ssh/config)"))
        self.read_at = -REMOTE_S if s.followed_remote is not None else self.read_at
        self.refresh()

    def _repeatable(self) -> bool:
        return self.session.followed is not None or self.session.followed_remote is not None

    def _tick(self) -> None:
        """The timer's refresh, while Done is shown (a runner host's read is a login)."""
        if not self.page.isVisible():
            self.timer.stop()  # show_for starts it again when Done comes back
            return
        self.refresh()

    def refresh(self) -> None:
        s = self.session
        if s.followed_remote is not None and time.monotonic() - self.read_at >= REMOTE_S:
            self._read_remote(s.followed_remote)
        keep = kept_running(s)
        kept = keep is not None
        # A runner host's job not read yet: whether it repeats is not known.
        unknown = s.followed_remote is not None and s.remote_status is None \
            and self.reading is not None
        self.again.setEnabled(not kept and not unknown)  # it syncs on its own
        self.button.setEnabled(not kept and not unknown and self._repeatable())
        self.button.setText("Keeping in sync" if kept else "&Keep in sync…")
        self.label.setVisible(kept)
        if keep is None:
            if not unknown:
                self.timer.stop()
            return
        self.label.setText("<b>Kept in sync:</b> " + markup.escape(
            describe(keep, time.time())) + ". <i>Final sync</i> stops the "
            "repetition and cuts over.")
        if not self.timer.isActive():
            self.timer.start()

    def _read_remote(self, p: Pointer) -> None:
        """Job `p` as its runner host has it, read off the GUI thread (one read at a time)."""
        if self.reading is not None:
            return
        self.reading, self.read_at = p, time.monotonic()
        quiet = self.session.logins.quiet()  # on a timer: what was answered, nothing asked
        run_task(lambda: elsewhere.job_status(p, quiet), self._remote_answer,
                 self._remote_failed)

    def _remote_answer(self, status: Any) -> None:
        p, self.reading = self.reading, None
        if p is not None and p == self.session.followed_remote:
            self.session.remote_status = status if isinstance(status, Status) else None
            self.refresh()
            self.remote_read.emit()

    def _remote_failed(self, exc: Exception) -> None:
        self.reading = None
        if self.session.followed_remote is not None:
            self.refresh()  # (the last answer stands; Done's requests say what fails)

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
