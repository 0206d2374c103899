"""The first page's list of jobs a runner owns: running, or ended while nobody watched, each
with its progress; choosing one shows it on the Transfer page from its first event. Jobs whose
runner is another machine are read there off the GUI thread (engine/runner/elsewhere), with
their runner host; one that does not answer is listed as such, and choosing it logs in there
again, asking what the login needs (a passphrase turned down as the window opened)."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QGroupBox, QListWidget, QListWidgetItem, QPushButton, QVBoxLayout

from ...engine import runner
from ...engine.hosts.remembered import SessionLogins
from ...engine.runner.elsewhere import Seen, survey
from ...engine.runner.keep import Keep, describe
from ...engine.runner.state import JobState, Status
from ...engine.units import format_rate, format_size
from .. import markup, style
from ..threads import run_task

REFRESH_MS = 3000  # the list's progress, read again this often
REMOTE_MS = 10_000  # ... and from the runner hosts (a login each)
STATES = {JobState.STARTING: "starting", JobState.RUNNING: "running",
          JobState.FINISHED: "finished, verified", JobState.FAILED: "failed",
          JobState.STOPPED: "stopped", JobState.RUNNER_DIED: "its runner died"}


def remote_text(seen: Seen) -> str:
    """A remote job's line: as a local one's, on its runner host; or that host's silence."""
    p = seen.pointer
    if seen.status is None:
        return (f"{p.what}: on {p.runner}, which does not answer now ({seen.problem}); "
                "Show transfer tries again")
    return f"{job_text(seen.status)} - on {p.runner}"


def job_text(s: Status) -> str:
    """`tank/t -> backup/t: running, 42% of 3.0 GiB at 110 MiB/s, about 0:05:10 left`."""
    text = f"{s.what}: {STATES[s.state]}"
    keep = Keep.of(s)
    if s.state is JobState.RUNNING and keep is not None and (keep.last_synced or keep.fault
                                                             or keep.final):
        return f"{s.what}: {describe(keep, time.time())}"
    if s.state is JobState.RUNNING and s.total:
        text += f", {s.done / s.total:.0%} of {format_size(s.total)} at {format_rate(s.rate)}"
        if s.eta is not None:
            text += f", about {int(s.eta) // 3600}:{int(s.eta) % 3600 // 60:02d}:" \
                    f"{int(s.eta) % 60:02d} left"
    elif s.state is JobState.FINISHED:
        text += f" ({format_size(s.done)})"
    elif s.outcome is not None and s.outcome.message:
        text += f": {s.outcome.message}"
    if s.live_note:
        text += f"; {s.live_note}"
    return text


class JobsPanel(QGroupBox):
    """Hidden while there is no such job.

    Signals:
        attach_requested(job_id): show this job on the Transfer page.
    """

    attach_requested = Signal(str)

    def __init__(self, logins: SessionLogins | None = None) -> None:
        super().__init__("Transfers running on their own")
        # The first survey, as the window opens, may ask a runner host's passphrase; those
        # on the timer ask nothing new.
        self.logins = logins or SessionLogins()
        self.asked = False
        self.retry: str | None = None  # a job chosen whose host did not answer: asked again
        self.setObjectName("jobs_panel")
        layout = QVBoxLayout(self)
        self.list = QListWidget()
        self.list.setObjectName("jobs_list")
        self.list.setAccessibleName("Transfers running on their own")
        self.list.setMaximumHeight(110)
        self.list.setWordWrap(True)  # a kept-in-sync job's line is long: wrapped, not cut
        self.show_button = QPushButton("Show transfer")
        self.show_button.setObjectName("show_job_button")
        self.show_button.setAccessibleName("Show the chosen transfer")
        self.show_button.setEnabled(False)
        layout.addWidget(self.list)
        layout.addWidget(self.show_button, alignment=Qt.AlignmentFlag.AlignRight)
        style.set_role(self, "muted")
        self.list.currentItemChanged.connect(
            lambda item, _old: self.show_button.setEnabled(item is not None))
        self.list.itemActivated.connect(lambda _item: self._show())
        self.show_button.clicked.connect(self._show)
        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.refresh)
        self.timer.start()
        self.remote: dict[str, Seen] = {}  # the remote jobs, by id, as last read
        self.surveying = False
        self.remote_timer = QTimer(self)
        self.remote_timer.setInterval(REMOTE_MS)
        self.remote_timer.timeout.connect(self.survey)
        self.remote_timer.start()
        self.refresh()
        self.survey()

    def stop(self) -> None:
        """No more reads (the window is closing): a survey under way ends on its own."""
        self.timer.stop()
        self.remote_timer.stop()

    def survey(self) -> None:
        """Read the remote jobs again, off the GUI thread (one read at a time)."""
        if not self.surveying:
            self.surveying = True
            logins = self.logins if not self.asked else self.logins.quiet()
            self.asked = True
            run_task(lambda: survey(logins), self._surveyed, self._survey_failed)

    def _survey_failed(self, _exc: Exception) -> None:
        self._surveyed([])

    def _surveyed(self, seen: list[Seen]) -> None:
        self.surveying = False
        self.remote = {x.pointer.id: x for x in seen}
        self.refresh()
        retry, self.retry = self.retry, None
        if retry is None:
            return
        if not self.asked:  # a quiet survey came back first: now the one that may ask
            self.retry = retry
            self.survey()
        elif (found := self.remote.get(retry)) is not None and found.status is not None:
            self.attach_requested.emit(retry)

    def refresh(self) -> None:
        """The jobs again, keeping the chosen one chosen."""
        current = self.current_id()
        jobs = runner.unwatched()
        self.list.clear()
        for s in jobs:
            item = QListWidgetItem(job_text(s))
            item.setData(Qt.ItemDataRole.UserRole, s.id)
            self.list.addItem(item)
            if s.id == current:
                self.list.setCurrentItem(item)
        for job_id, seen in self.remote.items():
            item = QListWidgetItem(remote_text(seen))
            item.setData(Qt.ItemDataRole.UserRole, job_id)
            item.setToolTip(markup.escape(f"runner host: {seen.pointer.runner}"))
            self.list.addItem(item)
            if job_id == current:
                self.list.setCurrentItem(item)
        self.setVisible(bool(jobs) or bool(self.remote))

    def current_id(self) -> str | None:
        item = self.list.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None

    def _show(self) -> None:
        job_id = self.current_id()
        if job_id is None:
            return
        seen = self.remote.get(job_id)
        if seen is not None and seen.status is None:
            # Its host did not answer, or a question of its login was turned down: log in
            # again, asking, and show the job once it answers.
            self.retry, self.asked = job_id, False
            self.survey()
            return
        self.attach_requested.emit(job_id)
