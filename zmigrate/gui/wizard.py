"""The migration wizard: seven pages over one Session, and every path out closes the hosts."""

from __future__ import annotations

import contextlib
import logging

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QMessageBox, QVBoxLayout, QWidget, QWizard

from ..engine import runner
from ..engine.hosts.remembered import SecretMemory
from ..engine.runner.remote import Pointer
from . import words
from .dialogs.confirm import after_stop, ask_keep_or_stop, ask_to_stop
from .dialogs.login import WindowLogins
from .icons import app_icon
from .jobs.again_asker import AgainAsker
from .jobs.kept import kept_running
from .jobs.record_job import RecordJob
from .notifier import Notifier
from .pages.base import Page, PageId
from .pages.destination_page import DestinationPage
from .pages.done_page import DonePage
from .pages.hosts_page import HostsPage
from .pages.review_page import ReviewPage
from .pages.source_page import SourcePage
from .pages.transfer_page import TransferPage
from .pages.transport_page import TransportPage
from .session import Session
from .settings import Settings
from .windows.history_window import HistoryWindow

log = logging.getLogger(__name__)

STEPS = ("Hosts", "Source", "Destination", "Transport", "Review", "Transfer", "Done")
STOP_WAIT = 30.0  # seconds a quitting app waits for a cancelled job to clean up


class StepList(QWidget):
    """The side column: every step, the current one highlighted."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("step_list")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 18, 18, 18)
        layout.setSpacing(10)
        title = QLabel("zmigrate")
        title.setStyleSheet("font-size: 14pt; font-weight: 700; color: #111827;")
        layout.addWidget(title)
        layout.addSpacing(6)
        self.labels = []
        for i, name in enumerate(STEPS):
            label = QLabel(f"{i + 1}  {name}")
            label.setAccessibleName(f"Step {i + 1}: {name}")
            layout.addWidget(label)
            self.labels.append(label)
        layout.addStretch(1)
        self.setMinimumWidth(150)
        self.set_current(0)

    def set_current(self, index: int) -> None:
        for i, label in enumerate(self.labels):
            if i == index:
                css = ("font-weight: 700; color: #ffffff; background: #2563eb; "
                       "border-radius: 5px; padding: 4px 8px;")
            elif i < index:
                css = "color: #374151; padding: 4px 8px;"
            else:
                css = "color: #9ca3af; padding: 4px 8px;"
            label.setStyleSheet(css)


class MigrationWizard(QWizard):
    """Hosts → Source → Destination → Transport → Review → Transfer → Done.

    Args:
        settings: where choices are remembered (tests pass an ini-backed QSettings).
    """

    def __init__(self, settings: Settings | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings or Settings()
        self.session = Session()
        # Runner hosts' logins ask over the window; the Hosts page shares what they were told.
        self.window_logins = WindowLogins(self, SecretMemory())
        self.session.logins = self.window_logins.logins
        self.setWindowTitle("zmigrate: move a ZFS dataset")
        self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        self.setOption(QWizard.WizardOption.NoBackButtonOnStartPage, True)
        self.setOption(QWizard.WizardOption.NoCancelButtonOnLastPage, True)
        self.setOption(QWizard.WizardOption.NoBackButtonOnLastPage, True)
        self.setOption(QWizard.WizardOption.NoDefaultButton, False)
        self.hosts_page = HostsPage(self.session, self.settings)
        self.source_page = SourcePage(self.session, self.settings)
        self.destination_page = DestinationPage(self.session, self.settings)
        self.transport_page = TransportPage(self.session, self.settings)
        self.review_page = ReviewPage(self.session, self.settings)
        self.transfer_page = TransferPage(self.session, self.settings)
        self.done_page = DonePage(self.session, self.settings)
        pages: list[tuple[PageId, Page]] = [
            (PageId.HOSTS, self.hosts_page), (PageId.SOURCE, self.source_page),
            (PageId.DESTINATION, self.destination_page), (PageId.TRANSPORT, self.transport_page),
            (PageId.REVIEW, self.review_page), (PageId.TRANSFER, self.transfer_page),
            (PageId.DONE, self.done_page)]
        for page_id, page in pages:
            self.setPage(page_id, page)
        self.setStartId(PageId.HOSTS)
        self.steps = StepList()
        self.setSideWidget(self.steps)
        self.currentIdChanged.connect(self._on_page_changed)
        self.transfer_page.ended.connect(self._on_transfer_ended)
        self.done_page.again_requested.connect(self.start_another)
        # Done shows the Transfer page's plots themselves: painted once, no stall at the switch.
        self.done_page.lend_plots(self.transfer_page.plots)
        self.done_page.lend_datasets(self.transfer_page.datasets)
        self.done_page.sync_requested.connect(self.sync_again)
        self.done_page.keep.keep_requested.connect(lambda every: self.follow_again(False, every))
        # ... of a runner's job: asked off this thread
        self.again = AgainAsker(self.session, self)
        self.again.follow.connect(self._follow_asked)
        self.again.failed.connect(
            lambda exc: self.done_page.ui.saved_label.setText(words.error_html(exc)))
        self.hosts_page.jobs.attach_requested.connect(self.reattach)
        self.hosts_page.ui.history_button.clicked.connect(self.open_history)
        self.done_page.history_requested.connect(self.open_history)
        self.history_window: HistoryWindow | None = None
        self.notifier = Notifier(self)
        QTimer.singleShot(0, self.announce_unwatched)
        self.setWindowIcon(app_icon())
        self.setAccessibleName("zmigrate migration wizard")
        self.resize(1060, 800)
        self._closing = False
        self._shut_down = False
        self.close_box: QMessageBox | None = None

    def _on_page_changed(self, page_id: int) -> None:
        if page_id >= 0:
            self.steps.set_current(page_id)

    def _on_transfer_ended(self) -> None:
        self._notify_end()
        if self._closing:
            self.shutdown()
            super().done(QWizard.DialogCode.Rejected.value)
        elif self.currentId() == PageId.TRANSFER:
            QTimer.singleShot(0, self.next)

    def _notify_end(self) -> str | None:
        """A desktop notification if a long transfer ended while the user looked elsewhere."""
        s = self.session
        plan = s.dataset_plan
        title, body, ok = words.transfer_ended(plan.source_snapshot if plan else None,
                                               s.summary, s.cancelled, s.error)
        return self.notifier.transfer_ended(title, body, self.transfer_page.ended_after, ok=ok)

    def announce_unwatched(self) -> list[str]:
        """Tell the user (the notifier) how each job that ended while no window watched it
        went, once; the first page lists them too. The titles said."""
        said = []
        with contextlib.suppress(OSError, ValueError):
            for st in runner.unannounced():
                title, body, ok = words.job_ended(st)
                self.notifier.announce(title, body, ok=ok)
                runner.mark_announced(st.id)
                said.append(title)
        return said

    def open_history(self) -> HistoryWindow:
        """Show the History window (one per wizard), with the list read again."""
        window = self.history_window
        if window is None:
            window = HistoryWindow()
            window.setWindowIcon(self.windowIcon())
            self.history_window = window
        else:
            window.refresh()
        window.show()
        window.raise_()
        window.activateWindow()
        return window

    def start_another(self) -> None:
        """Back to the first page with the same hosts still connected."""
        self.session.reset_transfer()
        self.restart()

    def sync_again(self, final: bool = False) -> None:
        """The same tree again, from Review: a new snapshot, then only each dataset's delta
        (final: the source datasets are set read-only first)."""
        s = self.session
        followed = s.followed is not None or s.followed_remote is not None
        if followed and (s.tree is None or (final and kept_running(s))):
            self.follow_again(final)  # from the runner's record: re-attached, or kept in sync
            return
        if s.tree is None:
            return
        s.followed = None
        s.take_snapshot, s.tree_snapshot, s.final = True, None, final
        s.job = s.plan = None
        s.store = s.summary = s.error = s.verdict = None
        s.cancelled = False
        # Review is the start now: its plan shows what the catch-up sends before it runs.
        self.setStartId(PageId.REVIEW)
        self.restart()
        self.setStartId(PageId.HOSTS)

    def follow_again(self, final: bool, keep_every: str | None = None) -> None:
        """Done's request on a runner's tree job, run by a runner and followed on the Transfer
        page (jobs/again_asker says which job)."""
        if self.again.ask(final, keep_every):
            p = self.session.followed_remote
            where = p.runner if p is not None else "the runner"
            self.done_page.ui.saved_label.setText(f"Asking {where}…")

    def _follow_asked(self, job: str | Pointer, after: int) -> None:
        if isinstance(job, Pointer):
            self.show_job(job, after)
        else:
            self.reattach(job, after)

    def reattach(self, job_id: str, after: int = 0) -> None:
        """Show a job its runner owns (here, or on another machine) on the Transfer page,
        from its first event (or after sequence number `after`), then Done."""
        seen = self.hosts_page.jobs.remote.get(job_id)
        status = seen.status if seen is not None else None
        remote = seen.pointer if seen is not None and status is not None else None
        argv = (status or runner.status(job_id)).request.get("argv", [])
        self.show_job(remote or job_id, after, any(a in ("-r", "--recursive") for a in argv))

    def show_job(self, job: str | Pointer, after: int = 0, tree: bool = True) -> None:
        """Follow `job` (its id here, or its pointer on a runner host) on the Transfer page
        after sequence number `after`, then Done (`tree`: a tree's job)."""
        s = self.session
        s.reset_transfer()
        if isinstance(job, Pointer):
            s.attached_remote = job
        else:
            s.attached = job
        s.follow_after, s.attached_tree = after, tree
        self.setStartId(PageId.TRANSFER)
        self.restart()
        self.setStartId(PageId.HOSTS)

    # -- every way out ------------------------------------------------------------------------
    def done(self, result: int) -> None:
        """Finish, Cancel, Esc and the window's close button all end here."""
        if self.transfer_page.running:
            self._ask_close()
            return
        self.shutdown()
        super().done(result)

    def _ask_close(self) -> None:
        if self.close_box is not None:
            return
        bridge = self.transfer_page.bridge
        if bridge is not None and isinstance(bridge.job, RecordJob):
            self._ask_keep(bridge.job)
            return
        def answered(stop: bool) -> None:
            self.close_box = None
            if stop:
                self._closing = True
                self.transfer_page.stop()

        self.close_box = ask_to_stop(
            self, "A transfer is running",
            "Stop the transfer and close zmigrate? Both ends are stopped and "
            f"{after_stop(self.session.plan)}.", "Stop and close", answered)

    def _ask_keep(self, job: RecordJob) -> None:
        """A job its runner owns: keep it running (the default) or stop it."""
        def answered(keep: bool | None) -> None:
            self.close_box = None
            if keep:
                job.detach()
                self.shutdown()
                super(MigrationWizard, self).done(QWizard.DialogCode.Rejected.value)
            elif keep is not None:
                self._closing = True
                self.transfer_page.stop()

        self.close_box = ask_keep_or_stop(self, answered, job.runner_note())

    def shutdown(self) -> None:
        """Cancel a running job, wait for it, and close every host (idempotent).

        Only ever blocks at the very end (quitting while a transfer runs).
        """
        if self._shut_down:
            return
        self._shut_down = True
        self.hosts_page.close_prompts()
        self.window_logins.close()
        # No login starts after this: the runner hosts' jobs are not read again.
        self.hosts_page.jobs.stop()
        self.done_page.keep.timer.stop()
        self.transport_page.stop_doctor()
        self.notifier.close()
        if self.history_window is not None:
            self.history_window.close()
            self.history_window.deleteLater()
            self.history_window = None
        bridge = self.transfer_page.bridge
        if bridge is not None and isinstance(bridge.job, RecordJob):
            bridge.job.detach()  # the runner owns the job: it goes on
        job = self.session.job  # (Review's job: the page's own only where it ran it itself)
        if job is not None and bridge is not None and bridge.job is job \
                and self.transfer_page.running and not job.done:
            job.cancel()
            if not job.wait(STOP_WAIT):
                log.warning("the job did not stop within %.0f s", STOP_WAIT)
        self.transfer_page.label_timer.stop()
        if self.transfer_page.refresher is not None:
            self.transfer_page.refresher.stop()
        self.session.close_hosts()
