"""The history's jobs as a table: one row per job, sortable by value, filterable by text."""

from __future__ import annotations

import time
from typing import Any, Final

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor

from ...engine.history import JobRecord
from ...engine.units import format_size
from .. import words

Index = QModelIndex | QPersistentModelIndex

COLUMNS: Final = ("Start", "Source → destination", "Snapshot", "Outcome", "Bytes", "Avg rate",
                  "Verdict")
START, ROUTE, SNAPSHOT, OUTCOME, BYTES, RATE, VERDICT = range(len(COLUMNS))
SORT_ROLE: Final = Qt.ItemDataRole.UserRole + 1
JOB_ROLE: Final = Qt.ItemDataRole.UserRole + 2

OUTCOME_COLORS: Final = {
    "verified": "#047857", "failed": "#b91c1c", "cancelled": "#92400e",
    "interrupted": "#92400e", "running": "#1d4ed8",
}


def when(started: float) -> str:
    """Local date and time, to the minute."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(started))


def route(job: JobRecord) -> str:
    return f"{job.source} → {job.destination}:{job.destination_dataset}"


def headline(text: str) -> str:
    """A verdict's first clause ("The network is the bottleneck"); the rest is a tooltip."""
    return text.split(":", 1)[0].strip()


def short_label(job: JobRecord) -> str:
    """How a job is named in legends: number, snapshot name and start."""
    snap = job.snapshot.split("@", 1)[-1]
    return f"#{job.id} @{snap} ({when(job.started)})"


class JobTableModel(QAbstractTableModel):
    """Read-only rows over a list of JobRecords (set at once with `set_jobs`)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs: list[JobRecord] = []
        # Each row's texts and sort keys, made once: sorting and filtering a thousand jobs
        # ask for them thousands of times, and formatting each time stalled the window.
        self.texts: list[tuple[str, ...]] = []
        self.keys: list[tuple[Any, ...]] = []
        self.haystacks: list[str] = []  # the row's texts, lower case, for the filter

    def set_jobs(self, jobs: list[JobRecord]) -> None:
        self.beginResetModel()
        self.jobs = list(jobs)
        self.texts = [tuple(self._text(j, c) for c in range(len(COLUMNS))) for j in self.jobs]
        self.keys = [tuple(self._sort_key(j, c) for c in range(len(COLUMNS)))
                     for j in self.jobs]
        self.haystacks = ["\n".join(t).lower() for t in self.texts]
        self.endResetModel()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort the rows by `column`'s key in Python (once per click; Qt's proxy asked for two
        keys per comparison, ~60,000 calls for a thousand jobs)."""
        if not 0 <= column < len(COLUMNS):
            return
        self.layoutAboutToBeChanged.emit()
        order_ = sorted(range(len(self.jobs)), key=lambda i: self.keys[i][column],
                        reverse=order == Qt.SortOrder.DescendingOrder)
        new_row = {old: new for new, old in enumerate(order_)}
        self.jobs = [self.jobs[i] for i in order_]
        self.texts = [self.texts[i] for i in order_]
        self.keys = [self.keys[i] for i in order_]
        self.haystacks = [self.haystacks[i] for i in order_]
        before = self.persistentIndexList()
        self.changePersistentIndexList(before, [self.index(new_row[i.row()], i.column())
                                                for i in before])
        self.layoutChanged.emit()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.jobs)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(COLUMNS):
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.jobs):
            return None
        job = self.jobs[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.texts[index.row()][col]
        if role == SORT_ROLE:
            return self.keys[index.row()][col]
        if role == JOB_ROLE:
            return job.id
        if role == Qt.ItemDataRole.ForegroundRole and col == OUTCOME:
            return QColor(OUTCOME_COLORS.get(job.outcome, "#374151"))
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (BYTES, RATE):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == VERDICT:
                return words.stored_verdict(job)
            if col == OUTCOME and job.error:
                return job.error
            if col == ROUTE:
                return job.description or route(job)
        return None

    @staticmethod
    def _text(job: JobRecord, col: int) -> str:
        if col == START:
            return when(job.started)
        if col == ROUTE:
            return route(job)
        if col == SNAPSHOT:
            return job.snapshot
        if col == OUTCOME:
            return job.outcome
        if col == BYTES:
            return format_size(job.bytes) if job.bytes else "—"
        if col == RATE:
            return f"{format_size(job.avg_rate)}/s" if job.avg_rate else "—"
        if col == VERDICT:
            return words.stored_bottleneck(job) or headline(job.verdict_text or job.verdict or "")
        return ""

    @staticmethod
    def _sort_key(job: JobRecord, col: int) -> Any:
        # Floats throughout: Qt does not order an int QVariant against a qlonglong one.
        if col == START:
            return float(job.started)
        if col == BYTES:
            return float(job.bytes)
        if col == RATE:
            return float(job.avg_rate or 0.0)
        return JobTableModel._text(job, col).lower()

    def job_at(self, row: int) -> JobRecord:
        return self.jobs[row]


class JobFilterModel(QSortFilterProxyModel):
    """Sorts by each column's value (dates, bytes and rates as numbers) and keeps the rows
    whose start, route, snapshot, outcome or verdict contains the filter text."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.outcome: str | None = None
        self.text = ""  # kept when the row's cached texts (any column) contain it
        self._column, self._order = -1, Qt.SortOrder.AscendingOrder
        self.setSortRole(SORT_ROLE)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(-1)

    def set_text(self, text: str) -> None:
        self.beginFilterChange()
        self.text = text.strip().lower()
        self.endFilterChange()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """The jobs' model sorts itself (in Python, once); this proxy only filters, keeping
        its order, and remembers the column and order for the header."""
        self._column, self._order = column, order
        model = self.sourceModel()
        if isinstance(model, JobTableModel):
            model.sort(column, order)
        else:
            super().sort(column, order)

    def sortColumn(self) -> int:
        return self._column

    def sortOrder(self) -> Qt.SortOrder:
        return self._order

    def set_outcome(self, outcome: str | None) -> None:
        """Only rows with this outcome (None: all)."""
        self.beginFilterChange()
        self.outcome = outcome
        self.endFilterChange()

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        model = self.sourceModel()
        if not isinstance(model, JobTableModel):
            return super().filterAcceptsRow(source_row, source_parent)
        if self.outcome is not None and model.job_at(source_row).outcome != self.outcome:
            return False
        return not self.text or self.text in model.haystacks[source_row]
