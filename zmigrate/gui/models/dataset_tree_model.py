"""A tree model over a zfs inventory: pools, nested datasets, and snapshots newest first.

No widget per row: nodes are small Python objects addressed by integer ids, so 500 datasets with
20 snapshots each load and filter instantly.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import IntEnum

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor

from ...engine.cmdline import below
from ...engine.units import format_size
from ...engine.zfs import Dataset, Snapshot
from .tree_pick import TreePick

ModelIndex = QModelIndex | QPersistentModelIndex
_ROOT = QModelIndex()  # default argument for Qt overrides (never modified)

NODE_ROLE = Qt.ItemDataRole.UserRole + 1  # the Dataset or Snapshot
NAME_ROLE = Qt.ItemDataRole.UserRole + 2  # full name, what the filter matches
SORT_ROLE = Qt.ItemDataRole.UserRole + 3  # raw number for size and date columns


class Column(IntEnum):
    NAME = 0
    USED = 1
    SECOND = 2  # referenced (source) or available (destination)
    WHEN = 3  # creation date (source) or newest snapshot (destination)


@dataclass(eq=False, slots=True)
class _Node:
    item: Dataset | Snapshot | None
    parent: int
    row: int
    children: list[int] = field(default_factory=list)


def _date(epoch: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch)) if epoch else ""


@dataclass(frozen=True, slots=True)
class Nodes:
    """An inventory as the model's nodes: built off the GUI thread for a big pool (10,000
    snapshots take ~10 ms, ~60 ms the first time), adopted by the model in one reset."""

    nodes: list[_Node]
    by_name: dict[str, int]  # dataset name -> node id
    # Per parent with child datasets, the first and last of them (they come before its
    # snapshots): what a change of the pick repaints.
    dataset_rows: list[tuple[int, int]]


def build_nodes(datasets: list[Dataset], with_snapshots: bool) -> Nodes:
    """The nodes of `datasets` (any order; parents are found by name), with each dataset's
    snapshots after its child datasets, newest first, where `with_snapshots`."""
    nodes = [_Node(None, -1, 0)]
    by_name: dict[str, int] = {}
    for ds in sorted(datasets, key=lambda d: d.name):
        parent_id = 0
        name = ds.name
        while "/" in name:
            name = name.rsplit("/", 1)[0]
            if name in by_name:
                parent_id = by_name[name]
                break
        node_id = len(nodes)
        parent = nodes[parent_id]
        nodes.append(_Node(ds, parent_id, len(parent.children)))
        parent.children.append(node_id)
        by_name[ds.name] = node_id
    dataset_rows = [(n.children[0], n.children[-1]) for n in nodes if n.children]
    if with_snapshots:
        for ds in datasets:
            ds_id = by_name[ds.name]
            parent = nodes[ds_id]
            for snap in reversed(ds.snapshots):
                node_id = len(nodes)
                nodes.append(_Node(snap, ds_id, len(parent.children)))
                parent.children.append(node_id)
    return Nodes(nodes, by_name, dataset_rows)


class DatasetTreeModel(QAbstractItemModel):
    """Inventory as a tree.

    Args:
        with_snapshots: list snapshots under their dataset (source side). Without them
            (destination side) the columns are name, used, available and newest snapshot.

    Signals:
        pick_changed(): a child of the picked tree (`set_pick`) was ticked or unticked.
    """

    pick_changed = Signal()

    def __init__(self, with_snapshots: bool = True, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.with_snapshots = with_snapshots
        self._nodes: list[_Node] = [_Node(None, -1, 0)]
        self._by_name: dict[str, int] = {}
        self._dataset_rows: list[tuple[int, int]] = []  # Nodes.dataset_rows
        self.pick: TreePick | None = None
        self.headers = (["Name", "Used", "Referenced", "Created"] if with_snapshots
                        else ["Name", "Used", "Available", "Newest snapshot"])

    # -- loading ----------------------------------------------------------------------------
    def set_datasets(self, datasets: list[Dataset]) -> None:
        """Replace the contents with `datasets` (any order; parents are found by name)."""
        self.adopt(build_nodes(datasets, self.with_snapshots))

    def adopt(self, built: Nodes) -> None:
        """Replace the contents with nodes `build_nodes` made (on any thread)."""
        self.beginResetModel()
        self._nodes = built.nodes
        self._by_name = built.by_name
        self._dataset_rows = built.dataset_rows
        self.endResetModel()

    def set_pick(self, pick: TreePick | None) -> None:
        """Show a check box on each descendant of `pick.root` (None: no check boxes)."""
        self.pick = pick
        self._changed_all()

    def _changed_all(self) -> None:
        """Every dataset's check box and colour may have changed: one signal per parent (its
        dataset children come first, in a row), for those roles only, so that a proxy does
        not filter and sort again and a pool of hundreds of datasets does not stall the
        window."""
        roles = [Qt.ItemDataRole.CheckStateRole, Qt.ItemDataRole.ForegroundRole]
        for first, last in self._dataset_rows:
            self.dataChanged.emit(self.createIndex(self._nodes[first].row, 0, first),
                                  self.createIndex(self._nodes[last].row, 0, last), roles)

    def _checkable(self, item: Dataset | Snapshot) -> bool:
        return (self.pick is not None and isinstance(item, Dataset)
                and below(item.name, self.pick.root))

    def setData(self, index: ModelIndex, value: object,
                role: int = Qt.ItemDataRole.EditRole) -> bool:
        item = self.item(index)
        if role != Qt.ItemDataRole.CheckStateRole or item is None or self.pick is None \
                or not self._checkable(item):
            return False
        state = value if isinstance(value, Qt.CheckState) else Qt.CheckState(int(str(value)))
        self.pick.set_ticked(item.name, state == Qt.CheckState.Checked)
        self._changed_all()  # descendants change how they look too
        self.pick_changed.emit()
        return True

    def dataset_names(self) -> list[str]:
        return list(self._by_name)

    def index_of(self, name: str) -> QModelIndex:
        """The index of a dataset (`pool/ds`) or snapshot (`pool/ds@snap`), or an invalid one."""
        ds_name, _, short = name.partition("@")
        node_id = self._by_name.get(ds_name)
        if node_id is None:
            return QModelIndex()
        if short:
            for child in self._nodes[node_id].children:
                item = self._nodes[child].item
                if isinstance(item, Snapshot) and item.short == short:
                    return self.createIndex(self._nodes[child].row, 0, child)
            return QModelIndex()
        return self.createIndex(self._nodes[node_id].row, 0, node_id)

    def matching(self, needle: str) -> set[int]:
        """The nodes whose full name holds `needle` (lower case), with their ancestors: a
        match's descendants hold it too (their names begin with the match's)."""
        shown: set[int] = set()
        nodes = self._nodes
        for node_id, node in enumerate(nodes):
            if node.item is None or needle not in node.item.name.lower():
                continue
            while node_id > 0 and node_id not in shown:
                shown.add(node_id)
                node_id = nodes[node_id].parent
        return shown

    def item(self, index: ModelIndex) -> Dataset | Snapshot | None:
        return self._nodes[index.internalId()].item if index.isValid() else None

    # -- QAbstractItemModel ------------------------------------------------------------------
    def index(self, row: int, column: int, parent: ModelIndex = _ROOT) -> QModelIndex:
        if column < 0 or column >= len(self.headers):
            return QModelIndex()
        parent_id = parent.internalId() if parent.isValid() else 0
        if parent.isValid() and parent.column() != 0:
            return QModelIndex()
        children = self._nodes[parent_id].children
        if 0 <= row < len(children):
            return self.createIndex(row, column, children[row])
        return QModelIndex()

    def parent(self, index: ModelIndex = _ROOT) -> QModelIndex:  # type: ignore[override]
        # Asked ~15,000 times when a filter on a big pool is cleared: no more than needed.
        # (An invalid index's internalId is 0, the invisible root's node, whose parent is -1.)
        parent_id = self._nodes[index.internalId()].parent
        if parent_id <= 0:
            return QModelIndex()
        return self.createIndex(self._nodes[parent_id].row, 0, parent_id)

    def rowCount(self, parent: ModelIndex = _ROOT) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._nodes[parent.internalId() if parent.isValid() else 0].children)

    def columnCount(self, parent: ModelIndex = _ROOT) -> int:
        return len(self.headers)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.headers[section]
        if role == Qt.ItemDataRole.TextAlignmentRole and section > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def flags(self, index: ModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        item = self._nodes[index.internalId()].item
        if index.column() == 0 and item is not None and self._checkable(item):
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        return flags

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        item = self._nodes[index.internalId()].item
        if item is None:
            return None
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(item, col)
        if role == NODE_ROLE:
            return item
        if role == NAME_ROLE:
            return item.name
        if role == SORT_ROLE:
            return self._sort_key(item, col)
        if role == Qt.ItemDataRole.TextAlignmentRole and col > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.CheckStateRole and col == 0 and self._checkable(item):
            assert self.pick is not None
            return (Qt.CheckState.Checked if self.pick.included(item.name)
                    else Qt.CheckState.Unchecked)
        if role == Qt.ItemDataRole.ForegroundRole and isinstance(item, Snapshot) and col == 0:
            return QColor("#4b5563")
        if role == Qt.ItemDataRole.ForegroundRole and self.pick is not None \
                and isinstance(item, Dataset) and below(item.name, self.pick.root) \
                and not self.pick.included(item.name):
            return QColor("#9ca3af")  # left out of the tree
        if role == Qt.ItemDataRole.ToolTipRole and col == 0:
            return item.name
        if role == Qt.ItemDataRole.AccessibleTextRole and col == 0:
            kind = "snapshot" if isinstance(item, Snapshot) else "dataset"
            return f"{kind} {item.name}"
        return None

    def _display(self, item: Dataset | Snapshot, col: int) -> str:
        if isinstance(item, Snapshot):
            return ("@" + item.short, format_size(item.used), format_size(item.referenced),
                    _date(item.creation))[col]
        name = item.name.rsplit("/", 1)[-1]
        if not self.with_snapshots:
            newest = item.newest
            return (name, format_size(item.used), format_size(item.available),
                    f"@{newest.short}  ({len(item.snapshots)})" if newest else "")[col]
        return (name, format_size(item.used), format_size(item.referenced),
                _date(item.creation))[col]

    def _sort_key(self, item: Dataset | Snapshot, col: int) -> object:
        if col == Column.NAME:
            return item.name
        if col == Column.USED:
            return item.used
        if col == Column.SECOND:
            if isinstance(item, Dataset) and not self.with_snapshots:
                return item.available
            return item.referenced
        return item.creation


class DatasetFilterProxy(QSortFilterProxyModel):
    """Case-insensitive filter on full names that keeps the ancestors (and children) of a match.

    The rows to show are found in one pass over the model's nodes when the text changes
    (`DatasetTreeModel.matching`); Qt then asks only about the rows of the parents it shows,
    not every row of a 10,000-snapshot pool through several calls each."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self._shown: set[int] | None = None  # node ids; None: no filter
        self._model: DatasetTreeModel | None = None  # the source model, as a Python object

    def setFilterFixedString(self, pattern: str) -> None:  # noqa: N802 - Qt's name
        model = self.sourceModel()
        needle = pattern.lower()
        self.beginFilterChange()
        if isinstance(model, DatasetTreeModel):
            self._model = model
            self._shown = model.matching(needle) if needle else None
        else:
            self._shown = None
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: ModelIndex) -> bool:  # noqa: N802
        shown, model = self._shown, self._model
        if shown is None or model is None:
            return True
        # (An invalid parent's internalId is 0: the invisible root's node.)
        nodes = model._nodes
        parent = source_parent.internalId()
        if parent >= len(nodes):
            return True  # a filter from before the model was loaded again
        children = nodes[parent].children
        return 0 <= source_row < len(children) and children[source_row] in shown
