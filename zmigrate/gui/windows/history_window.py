"""The History window: every recorded transfer, one job's plots and details, or two overlaid.

The store is read on pool threads (like every remote call): listing 1000 jobs
is quick, but a network home folder or a busy recorder may hold the file for a moment.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection
from typing import TypeVar

from PySide6.QtCore import QItemSelection, QModelIndex, Qt
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import QHeaderView, QWidget

from ...engine.events import Side
from ...engine.history import History, JobRecord, SampleRow, default_path
from ...engine.units import format_size
from .. import forms, markup, style, words
from ..generated.ui_compare_view import Ui_CompareView
from ..generated.ui_history_window import Ui_HistoryWindow
from ..generated.ui_job_view import Ui_JobView
from ..models.job_table_model import (
    JOB_ROLE,
    OUTCOME_COLORS,
    ROUTE,
    START,
    JobFilterModel,
    JobTableModel,
    route,
    short_label,
    when,
)
from ..plots.axes import elapsed
from ..plots.history_plots import ComparePlots, CompareSeries, both_sides, series_from_rows
from ..plots.transfer_plots import TransferPlots
from ..threads import run_task

log = logging.getLogger(__name__)
T = TypeVar("T")

JOB_LIMIT = 5000  # newest jobs listed; the store holds more, the filter box narrows them
OUTCOME_CHOICES = ("all", "verified", "failed", "cancelled", "interrupted", "running")
PathLike = str | os.PathLike[str] | None


def read_store(path: PathLike, fn: Callable[[History], T]) -> T:
    """Open the store, call `fn`, close it (on a worker thread: one connection per read)."""
    with History(path) as h:
        return fn(h)


def _rate(value: float | None) -> str:
    return f"{format_size(value)}/s" if value else "—"


class JobView(QWidget):
    """One stored job: its plots as the Transfer page drew them, and its details."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ui = Ui_JobView()
        forms.setup(self.ui, self)
        self.plots = TransferPlots(self.ui.rate_plot_host, self.ui.fill_plot_host)
        self.ui.commands_edit.setFont(style.monospace())
        self.ui.commands_edit.setLineWrapMode(self.ui.commands_edit.LineWrapMode.WidgetWidth)
        self.job: JobRecord | None = None

    def show_job(self, job: JobRecord, rows: list[SampleRow]) -> None:
        self.job = job
        ui = self.ui
        color = OUTCOME_COLORS.get(job.outcome, "#374151")
        ui.title_label.setText(
            f"<b>#{job.id}</b> {markup.escape(route(job))} &nbsp; <b>@"
            f"{markup.escape(job.snapshot.split('@', 1)[-1])}</b> &nbsp; "
            f"<span style='color:{color}; font-weight:600'>{markup.escape(job.outcome)}</span>")
        sender, receiver = both_sides(rows)
        self.plots.update_from(sender, receiver)
        facts = [
            ("Started", when(job.started)),
            ("Kind", job.kind + (f" from @{job.base.split('@', 1)[-1]}" if job.base else "")),
            ("Transport", job.transport + (f", port {job.port}" if job.port else "")),
            ("Bytes", format_size(job.bytes) if job.bytes else "—"),
            ("Duration", elapsed(job.seconds) if job.seconds else
             (elapsed(job.duration) if job.duration else "—")),
            ("Average rate", _rate(job.avg_rate)),
            ("Verdict", words.stored_verdict(job) or "—"),
            ("Samples", f"{job.sample_rows} stored"
             + (" (truncated)" if job.samples_truncated else "")),
        ]
        options = job.options
        if options:
            tuning = [f"{k.replace('_', ' ')} {format_size(v) if k.endswith('_size') else v}"
                      for k, v in options.items()
                      if k in ("buffer_size", "block_size", "rate_limit") and v]
            if tuning:
                facts.append(("Tuning", ", ".join(tuning)))
        ui.facts_label.setText("<table cellspacing='3'>" + "".join(
            f"<tr><td style='color:#6b7280; padding-right:12px'>{markup.escape(k)}</td>"
            f"<td>{markup.escape(v)}</td></tr>" for k, v in facts) + "</table>")
        if job.error:
            ui.error_label.setText(f"<b>{markup.escape(job.error)}</b>")
            style.set_banner(ui.error_label, "error")
        else:
            ui.error_label.setText("")
            style.set_banner(ui.error_label, "")
        lines = []
        for host, command in job.commands:
            lines += [f"# on {host}", command, ""]
        ui.commands_edit.setPlainText("\n".join(lines).rstrip() + "\n" if lines else "")


class CompareView(QWidget):
    """Two jobs' receive rates and receiver fill on shared axes (older = before)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ui = Ui_CompareView()
        forms.setup(self.ui, self)
        self.plots = ComparePlots(self.ui.rate_plot_host, self.ui.fill_plot_host)
        self.jobs: list[JobRecord] = []

    def show_jobs(self, pairs: list[tuple[JobRecord, list[SampleRow]]]) -> None:
        pairs = sorted(pairs, key=lambda p: p[0].started)
        self.jobs = [job for job, _ in pairs]
        roles = ("before", "after")
        series = [CompareSeries(f"{roles[i]}: {short_label(job)}",
                                series_from_rows(rows, Side.RECEIVE))
                  for i, (job, rows) in enumerate(pairs)]
        self.plots.show_jobs(series)
        self.ui.title_label.setText("<b>Compare</b> &nbsp; " + " &nbsp;vs&nbsp; ".join(
            markup.escape(s.name) for s in series))
        rows = []
        for i, job in enumerate(self.jobs):
            tuning = ", ".join(f"{k.split('_')[0]} {format_size(v)}"
                               for k, v in job.options.items()
                               if k in ("buffer_size", "block_size") and v)
            rows.append(f"<b>{roles[i]}</b> #{job.id}: {markup.escape(job.outcome)}, "
                        f"{format_size(job.bytes)} at {_rate(job.avg_rate)} on average"
                        + (f" ({markup.escape(tuning)}, {markup.escape(job.transport)})"
                           if tuning else ""))
        if len(self.jobs) == 2 and self.jobs[0].avg_rate and self.jobs[1].avg_rate:
            gain = self.jobs[1].avg_rate / self.jobs[0].avg_rate - 1
            rows.append(f"After is {abs(gain):.0%} {'faster' if gain >= 0 else 'slower'} "
                        "on average.")
        self.ui.numbers_label.setText("<br>".join(rows))


class HistoryWindow(QWidget):
    """The transfer history: a sortable, filterable table; below it one job or a comparison.

    Args:
        path: the store (None: the default one, which honours $ZMIGRATE_DATA_DIR).
    """

    def __init__(self, path: PathLike = None, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.path = path
        self.ui = Ui_HistoryWindow()
        forms.setup(self.ui, self)
        ui = self.ui
        self.setAccessibleName("Transfer history")
        self.model = JobTableModel(self)
        self.proxy = JobFilterModel(self)
        self.proxy.setSourceModel(self.model)
        table = ui.job_table
        table.setModel(self.proxy)
        table.sortByColumn(START, Qt.SortOrder.DescendingOrder)
        table.verticalHeader().hide()
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(ROUTE, QHeaderView.ResizeMode.Stretch)
        # Widths from the first rows, not every one: re-measuring a thousand jobs' cells on
        # each sort took most of a second (their widths hardly differ).
        header.setResizeContentsPrecision(100)
        header.setStretchLastSection(False)
        self.job_view = JobView()
        self.compare_view = CompareView()
        for page, view in ((ui.job_page, self.job_view), (ui.compare_page, self.compare_view)):
            forms.embed(page, view)
        ui.splitter.setStretchFactor(0, 1)
        ui.splitter.setStretchFactor(1, 3)
        ui.splitter.setSizes([190, 570])
        ui.outcome_combo.addItems([c if c != "all" else "All" for c in OUTCOME_CHOICES])
        style.set_role(ui.status_label, "muted")
        style.set_role(ui.empty_label, "muted")
        ui.filter_edit.textChanged.connect(self._on_filter)
        ui.outcome_combo.currentIndexChanged.connect(self._on_outcome)
        ui.refresh_button.clicked.connect(self.refresh)
        ui.compare_button.clicked.connect(self.compare_selected)
        ui.compare_button.setEnabled(False)
        table.selectionModel().selectionChanged.connect(self._on_selection)
        table.activated.connect(self._on_activated)
        for key, slot in ((QKeySequence.StandardKey.Find, ui.filter_edit.setFocus),
                          (QKeySequence.StandardKey.Refresh, self.refresh),
                          (QKeySequence(Qt.Key.Key_Escape), self.close)):
            QShortcut(QKeySequence(key), self).activated.connect(slot)
        self._list_gen = self._detail_gen = 0
        self.loading = False
        self.detail_loading = False
        self.error: str | None = None
        self.resize(1100, 820)

    # -- reading ------------------------------------------------------------------------------
    def _read(self, fn: Callable[[History], T], on_result: Callable[[T], None]) -> None:
        path = self.path
        run_task(lambda: read_store(path, fn), on_result, self._on_error)

    def refresh(self) -> None:
        """Read the job list again (off the GUI thread)."""
        self._list_gen += 1
        gen = self._list_gen
        self.loading = True
        self.ui.status_label.setText("Reading the history…")

        def done(jobs: list[JobRecord]) -> None:
            if gen == self._list_gen:
                self._on_jobs(jobs)

        self._read(lambda h: h.jobs(limit=JOB_LIMIT), done)

    def _on_jobs(self, jobs: list[JobRecord]) -> None:
        self.loading = False
        self.error = None
        selected = set(self.selected_ids())
        self.model.set_jobs(jobs)
        table = self.ui.job_table
        table.sortByColumn(self.proxy.sortColumn() if self.proxy.sortColumn() >= 0 else START,
                           self.proxy.sortOrder())
        if selected:
            self.select_ids(selected)
        self._count()

    def _on_error(self, exc: Exception) -> None:
        self.loading = self.detail_loading = False
        self.error = str(exc)
        self.ui.status_label.setText(words.error_html(exc))

    def _count(self) -> None:
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        text = f"{total} transfer{'s' if total != 1 else ''}"
        if shown != total:
            text = f"{shown} of {text} shown"
        self.ui.status_label.setText(text)
        self.ui.status_label.setToolTip(f"Stored in {self.store_path()}")

    def store_path(self) -> str:
        return str(self.path) if self.path is not None else str(default_path())

    # -- the table ----------------------------------------------------------------------------
    def _on_filter(self, text: str) -> None:
        self.proxy.set_text(text)
        self._count()

    def _on_outcome(self, index: int) -> None:
        choice = OUTCOME_CHOICES[index] if 0 <= index < len(OUTCOME_CHOICES) else "all"
        self.proxy.set_outcome(None if choice == "all" else choice)
        self._count()

    def selected_ids(self) -> list[int]:
        """The selected jobs' ids, in table order."""
        rows = self.ui.job_table.selectionModel().selectedRows()
        return [int(i.data(JOB_ROLE)) for i in sorted(rows, key=lambda i: i.row())]

    def select_ids(self, ids: Collection[int]) -> None:
        """Select these jobs (tests and the screenshot script)."""
        sel = self.ui.job_table.selectionModel()
        sel.clearSelection()
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, 0)
            if index.data(JOB_ROLE) in ids:
                sel.select(index, sel.SelectionFlag.Select | sel.SelectionFlag.Rows)

    def _on_selection(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        ids = self.selected_ids()
        self.ui.compare_button.setEnabled(len(ids) == 2)
        if len(ids) == 1:
            self.open_job(ids[0])

    def _on_activated(self, index: QModelIndex) -> None:
        self.open_job(int(index.data(JOB_ROLE)))

    # -- one job, or two ----------------------------------------------------------------------
    def open_job(self, job_id: int) -> None:
        """Show one job's plots and details (read off the GUI thread)."""
        self._detail_gen += 1
        gen = self._detail_gen
        self.detail_loading = True

        def done(result: tuple[JobRecord, list[SampleRow]]) -> None:
            if gen == self._detail_gen:
                self.detail_loading = False
                self.job_view.show_job(*result)
                self.ui.detail_stack.setCurrentWidget(self.ui.job_page)

        self._read(lambda h: (h.job(job_id), h.samples(job_id)), done)

    def compare_selected(self) -> None:
        ids = self.selected_ids()
        if len(ids) == 2:
            self.compare(ids[0], ids[1])

    def compare(self, a: int, b: int) -> None:
        """Overlay two jobs (read off the GUI thread)."""
        self._detail_gen += 1
        gen = self._detail_gen
        self.detail_loading = True

        def done(result: list[tuple[JobRecord, list[SampleRow]]]) -> None:
            if gen == self._detail_gen:
                self.detail_loading = False
                self.compare_view.show_jobs(result)
                self.ui.detail_stack.setCurrentWidget(self.ui.compare_page)

        self._read(lambda h: [(h.job(i), h.samples(i, "receive")) for i in (a, b)], done)

    # -- window -------------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self.model.jobs and not self.loading:
            self.refresh()

    def closeEvent(self, event: QCloseEvent) -> None:
        self._list_gen += 1  # results still in flight are dropped
        self._detail_gen += 1
        super().closeEvent(event)
