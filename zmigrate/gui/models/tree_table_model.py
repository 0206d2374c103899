"""The Transfer page's dataset table: one row per dataset of a tree job, fed by its events.

Rows come from the engine's per-dataset state events (`DatasetState`: dataset, destination,
state, index, size, bytes, rate, detail). The model reads them by attribute, so it depends on
nothing but their shape and tests can feed plain objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Protocol

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from ...engine.units import format_rate, format_size

ModelIndex = QModelIndex | QPersistentModelIndex
_ROOT = QModelIndex()  # default argument for Qt overrides (never modified)

STATE_ROLE = Qt.ItemDataRole.UserRole + 1  # the row's state word ("waiting", "verified", ...)

# Colours of the state column: what needs the eye (failed) stands out, done is calm.
_STATE_COLOURS = {"sending": "#2563eb", "received": "#0f766e", "verified": "#15803d",
                  "failed": "#b91c1c", "skipped": "#6b7280", "vanished": "#b45309",
                  "waiting": "#6b7280"}


class Column(IntEnum):
    NAME = 0
    SIZE = 1
    STATE = 2
    RATE = 3


class DatasetEvent(Protocol):
    """What the model reads of the engine's per-dataset event."""

    @property
    def dataset(self) -> str: ...
    @property
    def destination(self) -> str: ...
    @property
    def index(self) -> int: ...
    @property
    def state(self) -> str: ...  # waiting, sending, verified, skipped, failed
    @property
    def size(self) -> int | None: ...
    @property
    def bytes(self) -> int: ...
    @property
    def rate(self) -> float | None: ...
    @property
    def detail(self) -> str: ...


@dataclass(slots=True)
class Row:
    """One dataset as the table shows it."""

    dataset: str
    destination: str
    order: int
    state: str = "waiting"
    size: int | None = None
    bytes: int = 0
    rate: float = 0.0
    detail: str = ""


class TreeTableModel(QAbstractTableModel):
    """Name, size, state and rate of every dataset of a tree transfer, in the tree's order."""

    headers = ("Dataset", "Size", "State", "Rate")

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[Row] = []
        self._by_name: dict[str, int] = {}

    def clear(self) -> None:
        self.beginResetModel()
        self.rows = []
        self._by_name = {}
        self.endResetModel()

    def apply(self, event: DatasetEvent) -> int:
        """Add or update the row of `event.dataset`; returns its row number."""
        state = event.state
        row_no = self._by_name.get(event.dataset)
        if row_no is None:
            # Vanished datasets come with index -1: after the others.
            order = event.index if event.index >= 0 else 1_000_000 + len(self.rows)
            row_no = sum(1 for r in self.rows if r.order < order)
            self.beginInsertRows(QModelIndex(), row_no, row_no)
            self.rows.insert(row_no, Row(event.dataset, event.destination, order))
            self._by_name = {r.dataset: i for i, r in enumerate(self.rows)}
            self.endInsertRows()
        row = self.rows[row_no]
        row.state = state
        if event.size is not None:
            row.size = event.size
        # A dataset's "sending" announcement carries no bytes yet: keep what is known.
        if event.bytes or state != "sending":
            row.bytes = event.bytes
        if event.rate or state != "sending":
            row.rate = event.rate or 0.0
        row.detail = event.detail
        self.dataChanged.emit(self.index(row_no, 0), self.index(row_no, len(self.headers) - 1))
        return row_no

    def set_live_rate(self, order: int, rate: float) -> None:
        """The live rate of the dataset at `order` in the tree (the tree's Progress events
        carry the rate of the dataset that reported and its place: step = order + 1)."""
        row_no = next((i for i, r in enumerate(self.rows) if r.order == order), None)
        if row_no is None:
            return
        row = self.rows[row_no]
        if row.state != "sending":
            return
        row.rate = rate
        self.dataChanged.emit(self.index(row_no, Column.SIZE), self.index(row_no, Column.RATE))

    def row_of(self, dataset: str) -> Row | None:
        row_no = self._by_name.get(dataset)
        return self.rows[row_no] if row_no is not None else None

    def states(self) -> dict[str, str]:
        """Dataset → state word (what tests and Done read)."""
        return {r.dataset: r.state for r in self.rows}

    def count_line(self) -> str:
        """How far the tree is, e.g. "2 of 6 datasets done, 2 sending"."""
        done = sum(1 for r in self.rows if r.state in ("received", "verified", "skipped"))
        sending = sum(1 for r in self.rows if r.state == "sending")
        total = sum(1 for r in self.rows if r.state != "vanished")
        return (f"{done} of {total} dataset{'s' if total != 1 else ''} done"
                + (f", {sending} sending" if sending else ""))

    def sending(self) -> str | None:
        """The dataset being sent now, if any."""
        return next((r.dataset for r in self.rows if r.state == "sending"), None)

    # -- QAbstractTableModel -----------------------------------------------------------------
    def rowCount(self, parent: ModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: ModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self.headers)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.headers[section]
        if role == Qt.ItemDataRole.TextAlignmentRole and section in (Column.SIZE, Column.RATE):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row = self.rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(row, col)
        if role == STATE_ROLE:
            return row.state
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (Column.SIZE, Column.RATE):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and col == Column.STATE:
            return QColor(_STATE_COLOURS.get(row.state, "#111827"))
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = f"{row.dataset} → {row.destination}"
            return f"{tip}\n{row.detail}" if row.detail else tip
        return None

    @staticmethod
    def _display(row: Row, col: int) -> str:
        if col == Column.NAME:
            return row.dataset
        if col == Column.SIZE:
            if row.bytes and row.state in ("sending", "received", "verified", "failed"):
                size = f"{format_size(row.bytes)}"
                return size + (f" of {format_size(row.size)}" if row.size and
                               row.state == "sending" else "")
            return format_size(row.size) if row.size is not None else ""
        if col == Column.STATE:
            return row.state
        return format_rate(row.rate) if row.rate else ""
