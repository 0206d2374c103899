"""Page 6: the running transfer: live plots, progress, both ends' log, and Stop.

A tree adds a table of its datasets above the plots; the plots follow the dataset being sent,
and progress, bytes and time left are the whole tree's.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QMessageBox, QTableView, QWidget

from zmigrate.engine.readings.samples import SampleStore
from zmigrate.engine.verdict.diagnosis import Bottleneck, Verdict

from ...engine.events import (
    DatasetState,
    Failed,
    LogLine,
    Observer,
    OutOfTouch,
    Progress,
    Side,
    Summary,
)
from ...engine.history import Recorder
from ...engine.tree import SENDING
from ...engine.units import format_size
from .. import forms, style
from ..dialogs.confirm import after_stop, ask_to_stop
from ..generated.ui_transfer_page import Ui_TransferPage
from ..job_bridge import JobBridge
from ..jobs.start import follows_runner, shown
from ..models.tree_table_model import TreeTableModel
from ..plots.axes import elapsed
from ..plots.refresher import PlotRefresher
from ..plots.transfer_plots import TransferPlots
from ..session import Session
from ..settings import Settings
from ..widgets.ends_line import EndsLine
from ..widgets.stage_line import StageLine
from ..words import verdict_html
from .base import Page

LOG_LINES = 2000
# The setting that hands each transfer to a runner of its own (default: yes).
DETACHED = "detached"

STAGES = {
    "preflight": "Checking both hosts",
    "starting": "Starting both ends",
    "sending": "Sending",
    "verifying": "Verifying",
    "cleanup": "Cleaning up",
}


def _wire_average(p: Progress, rate: float) -> float | None:
    """Compressed in transit: the wire's share of an average `rate`, at the last ratio seen."""
    return rate * p.wire_rate / p.rate if p.wire_rate is not None and p.rate > 0 else None


def _compact(view: QTableView, model: TreeTableModel) -> None:
    """The tree's table, hidden until a tree runs: compact rows, the name column stretched."""
    view.setModel(model)
    rows = view.verticalHeader()
    rows.hide()
    rows.setDefaultSectionSize(view.fontMetrics().height() + 6)
    header = view.horizontalHeader()
    header.setStretchLastSection(False)
    header.setSectionResizeMode(0, header.ResizeMode.Stretch)
    for col in range(1, model.columnCount()):
        header.setSectionResizeMode(col, header.ResizeMode.ResizeToContents)
    view.hide()


class TransferPage(Page):
    """Starts the prepared job when shown and follows it to its end.

    Signals:
        ended(): the job finished, failed or was cancelled; the session holds the outcome.
    """

    ended = Signal()

    def __init__(self, session: Session, settings: Settings,
                 parent: QWidget | None = None) -> None:
        super().__init__(session, settings, parent)
        self.ui = Ui_TransferPage()
        forms.setup(self.ui, self)
        ui = self.ui
        self.plots = TransferPlots(ui.rate_plot_host, ui.fill_plot_host)
        ui.log_edit.setFont(style.monospace())
        ui.log_edit.setMaximumBlockCount(LOG_LINES)
        ui.log_edit.setLineWrapMode(ui.log_edit.LineWrapMode.WidgetWidth)
        ui.stage_label.setWordWrap(False)
        ui.log_edit.hide()
        ui.log_toggle.toggled.connect(self._on_log_toggled)
        ui.verdict_frame.hide()
        style.set_banner(ui.verdict_frame, "info")
        style.set_role(ui.stage_label, "value")
        style.set_role(ui.progress_label, "muted")
        ui.stop_button.clicked.connect(self.ask_stop)
        self.datasets = TreeTableModel(self)
        _compact(ui.datasets_view, self.datasets)
        self.bridge: JobBridge | None = None
        self.refresher: PlotRefresher | None = None
        self.confirm_box: QMessageBox | None = None
        self.last_progress: Progress | None = None
        self.stage_line = StageLine(ui.stage_label)
        self.ends = EndsLine(ui.ends_label)
        self.recorder_factory: Callable[[], Observer] | None = Recorder.for_default_store
        self.recorder: Observer | None = None
        self.started = self.ended_after = 0.0
        self.is_done = False
        self.stopping = False
        self.label_timer = QTimer(self)
        self.label_timer.setInterval(1000)  # text changes once a second: easier to read
        self.label_timer.timeout.connect(self._show_progress)

    # -- lifecycle ----------------------------------------------------------------------------
    def initializePage(self) -> None:
        s = self.session
        if follows_runner(self, self, self.settings.value(DETACHED, True)):
            return
        job = s.job
        assert job is not None and s.plan is not None
        s.store, s.summary, s.error, s.cancelled, s.verdict = SampleStore(), None, None, False, None
        # Every transfer the wizard runs goes into the history. The recorder opens the store
        # on the job's thread, at PlanReady: nothing of it runs here.
        self.recorder = self.recorder_factory() if self.recorder_factory else None
        if self.recorder is not None:
            job.subscribe(self.recorder)
        self.attach(JobBridge(job, s.store, self))
        assert self.bridge is not None
        self.bridge.start(plan=s.dataset_plan)  # the plan Review showed, not a new one

    def attach(self, bridge: JobBridge) -> None:
        """Follow `bridge` (tests attach one and replay a recorded trace into it)."""
        if self.plots.rates.parent() is not self.ui.rate_plot_host:
            self.plots.place(self.ui.rate_plot_host, self.ui.fill_plot_host)  # back from Done
        self.started = time.monotonic()
        self.ended_after = 0.0
        self.is_done = self.stopping = False
        self.last_progress = None
        self.ui.log_edit.clear()
        self.ui.verdict_frame.hide()
        self.ui.progress_bar.setValue(0)
        self.ui.progress_label.setText("")
        self.ui.stop_button.setEnabled(True)
        self.stage_line.reset("Starting…")
        self.datasets.clear()
        self.ui.datasets_view.setVisible(self.session.shows_tree)
        self.bridge = bridge
        bridge.dataset_state.connect(self._on_dataset_state)
        bridge.stage_changed.connect(self._on_stage)
        bridge.log_line.connect(self._on_log_line)
        bridge.progress.connect(self._on_progress)
        bridge.verdict.connect(self._on_verdict)
        bridge.verdict_cleared.connect(self._on_verdict_cleared)
        bridge.finished.connect(self._on_finished)
        bridge.failed.connect(self._on_failed)
        bridge.wire.connect(self.plots.set_wire)  # the ceiling: read beside the preflight
        bridge.out_of_touch.connect(self._on_out_of_touch)
        self.ends.attach(bridge)
        self.plots.set_wire(bridge.seen_wire())
        self.refresher = PlotRefresher(bridge.store, self.plots.update_from, self)
        self.refresher.start()
        self.label_timer.start()
        self.completeChanged.emit()

    def _end(self) -> None:
        self.is_done = True
        shown(self.session, self.bridge.job if self.bridge is not None else None)
        self.ended_after = time.monotonic() - self.started
        if self.refresher is not None:
            self.refresher.refresh()
            self.refresher.stop()
        self.label_timer.stop()
        self._show_progress()
        self.ui.stop_button.setEnabled(False)
        if self.confirm_box is not None:
            self.confirm_box.reject()
        self.completeChanged.emit()
        self.ended.emit()

    # -- events -------------------------------------------------------------------------------
    def _on_stage(self, stage: str, detail: str, dataset: str = "") -> None:
        if self.stopping:
            return
        words = STAGES.get(stage, stage.capitalize())
        text = f"{words}: {detail}" if detail else words
        # A tree's datasets each report their own stages, named (several may be in flight);
        # the tree's own stages (reading, the final check) belong to none of them.
        self.stage_line.show(f"{dataset} · {text}" if dataset else text)

    def _on_out_of_touch(self, e: OutOfTouch) -> None:
        self.ui.log_edit.appendPlainText(self.stage_line.touch(e))

    def _on_log_line(self, line: LogLine) -> None:
        who = "sender" if line.side is Side.SEND else "receiver"
        self.ui.log_edit.appendPlainText(f"[{line.host} {who}] {line.text}")

    def _on_progress(self, progress: Progress) -> None:
        self.last_progress = progress
        if self.session.tree is not None:
            # A tree's progress is the whole tree's; `step` names the dataset that reported,
            # `step_rate` is its own rate.
            rate = progress.step_rate if progress.step_rate is not None else progress.rate
            self.datasets.set_live_rate(progress.step - 1, rate)

    def _on_dataset_state(self, state: DatasetState) -> None:
        row = self.datasets.apply(state)
        if state.state == SENDING and not self.stopping:
            self.stage_line.show(f"Sending {state.dataset} ({state.index + 1} of {state.count})")
            self.ui.datasets_view.scrollTo(self.datasets.index(row, 0))

    def _on_verdict_cleared(self) -> None:
        """The plots moved on to another dataset: its own verdict comes once it is judged."""
        self.session.verdict = None
        self.ui.verdict_frame.hide()

    def _on_verdict(self, verdict: Verdict) -> None:
        self.session.verdict = verdict
        # A stalled stream is a warning: nothing moves until its cause is dealt with.
        style.set_banner(self.ui.verdict_frame,
                         "warn" if verdict.kind is Bottleneck.STALLED else "info")
        self.ui.verdict_label.setText(verdict_html(verdict))
        self.ui.verdict_frame.show()

    def _on_finished(self, summary: Summary) -> None:
        self.session.summary = summary
        self.stage_line.reset("Finished")
        self._end()

    def _on_failed(self, failed: Failed) -> None:
        self.session.error = failed.error
        self.session.cancelled = failed.cancelled
        self.stage_line.reset("Stopped" if failed.cancelled else "Failed")
        self._end()

    def _show_progress(self) -> None:
        self.stage_line.tick()
        p = self.last_progress
        store = self.bridge.store if self.bridge else None
        sent = 0
        if store is not None:
            last = store.series[Side.SEND].last()
            sent = int(last[1][2]) if last else 0
        if p is None:
            self.ui.progress_label.setText(f"Sent {format_size(sent)}" if sent else "")
            return
        summary = self.session.summary if self.is_done else None
        done, total, rate, wire, eta = p.done, p.total, p.rate, p.wire_rate, p.eta
        tree = self.session.tree is not None
        if summary is not None:
            # The last Progress may predate the receiver's final count: the summary is exact.
            done, total, rate, wire = (summary.bytes, summary.bytes, summary.rate,
                                       _wire_average(p, summary.rate))
        parts = []
        bar = self.ui.progress_bar
        if total:
            fraction = min(1.0, done / total)
            bar.setRange(0, 1000)
            bar.setValue(int(fraction * 1000))
            parts.append(f"{format_size(done)} of {format_size(total)} written "
                         f"({fraction:.0%})")
        else:
            if not self.is_done:
                bar.setRange(0, 0)  # size unknown: a busy bar
            parts.append(f"{format_size(done)} written")
        if not tree and sent > done:
            parts.append(f"{format_size(sent)} sent")
        if rate > 0 or summary is not None:  # the engine's smoothed rate: 0 until it settles
            parts.append(f"{format_size(rate)}/s" + (" on average" if summary else "")
                         + self.plots.share(rate, wire))
        parts.append(f"elapsed {elapsed(summary.seconds if summary else p.elapsed)}")
        if p.stalled is not None and not self.is_done:
            parts.append(f"stalled for {elapsed(p.stalled)}")
        elif eta is not None and not self.is_done:
            parts.append(f"about {elapsed(eta)} left")
        elif total and rate > 0 and not self.is_done:
            parts.append("time left unknown")
        if tree and not self.is_done:
            # Several datasets may be in flight: `step` is only the one that reported last.
            parts.append(self.datasets.count_line())
        elif p.steps > 1 and not self.is_done:
            parts.append(f"step {p.step} of {p.steps}")
        stale = self.stage_line.lost is not None and not self.is_done
        self.ui.progress_label.setText(("When touch was lost: " if stale else "")
                                       + "  ·  ".join(parts))

    # -- stopping -----------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.bridge is not None and not self.is_done

    def ask_stop(self) -> None:
        """Ask before stopping (non-blocking); stopping kills both ends and cleans up."""
        if not self.running or self.confirm_box is not None:
            return
        def answered(stop: bool) -> None:
            self.confirm_box = None
            if stop:
                self.stop()

        self.confirm_box = ask_to_stop(
            self, "Stop the transfer?",
            f"Stop the transfer now? Both ends are stopped and {after_stop(self.session.plan)}. "
            "Nothing already on the destination is touched.", "Stop transfer", answered)

    def stop(self) -> None:
        """Stop without asking."""
        if self.bridge is not None and self.running and not self.stopping:
            self.stopping = True
            self.stage_line.reset("Stopping both ends…")
            self.ui.stop_button.setEnabled(False)
            self.bridge.cancel()

    def _on_log_toggled(self, shown: bool) -> None:
        self.ui.log_edit.setVisible(shown)
        self.ui.log_toggle.setArrowType(Qt.ArrowType.DownArrow if shown
                                        else Qt.ArrowType.RightArrow)

    def isComplete(self) -> bool:
        return self.is_done
