"""Shared by the Source and Destination pages: a filtered dataset tree loaded off the GUI thread."""

from __future__ import annotations

import gc
from collections.abc import Callable

from PySide6.QtCore import QModelIndex, QTimer
from PySide6.QtWidgets import QHeaderView, QLabel, QLineEdit, QProgressBar, QTreeView

from zmigrate.engine.hosts import Host
from zmigrate.engine.zfs import Capabilities, Dataset, inventory

from .. import style, words
from ..models.dataset_tree_model import DatasetFilterProxy, DatasetTreeModel, Nodes, build_nodes
from ..threads import run_task, without_collection


class DatasetTree:
    """Model, proxy and view wired together, with an async `load`."""

    def __init__(self, view: QTreeView, filter_edit: QLineEdit, busy: QProgressBar,
                 status: QLabel, with_snapshots: bool) -> None:
        self.view = view
        self.busy = busy
        self.status = status
        self.model = DatasetTreeModel(with_snapshots, view)
        self.proxy = DatasetFilterProxy(view)
        self.proxy.setSourceModel(self.model)
        view.setModel(self.proxy)
        header = view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        # The figures' columns are fitted once per load (show), not at every layout pass: with
        # ResizeToContents each change of the wizard's buttons read thousands of cells again
        # (~130 ms beside a big pool). Sized on the first hundred rows, not a thousand.
        for col in range(1, self.model.columnCount()):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
        header.setResizeContentsPrecision(100)
        filter_edit.textChanged.connect(self._on_filter)
        self.loading = False
        self.filtering = False
        self._expanded_before: list[str] | None = None  # the open rows when a filter began
        self._generation = 0
        busy.hide()

    def _on_filter(self, text: str) -> None:
        needle = text.strip()
        if needle and self._expanded_before is None:
            self._expanded_before = self._expanded()
        restore = not needle and self._expanded_before is not None
        # Rows the filter hides leave the selection: that is not a choice (`filtering`).
        self.filtering = True
        try:
            if restore:
                # Closed first, so the thousands of rows the filter gives back come into closed
                # parents (nothing to lay out), then the rows open before the filter open again:
                # the matches' parents would stay open, to lay out and filter the next time.
                self.view.collapseAll()
            self.proxy.setFilterFixedString(needle)
        finally:
            self.filtering = False
        if needle:
            # In an event of its own: the filter (with the open rows' names read first) and
            # opening every match's parents each cost ~15 ms beside a big pool, and the layout
            # after them more; one after the other they stalled the window ~80 ms.
            QTimer.singleShot(0, self.view, self._expand_matches)
        elif restore and self._expanded_before is not None:
            for name in self._expanded_before:
                self.view.expand(self.proxy.mapFromSource(self.model.index_of(name)))
            self._expanded_before = None

    def _expand_matches(self) -> None:
        if self._expanded_before is not None:  # still filtered (not cleared meanwhile)
            self.view.expandAll()

    def _expanded(self) -> list[str]:
        """The datasets whose rows are open, parents first."""
        return [name for name in self.model.dataset_names()
                if self.view.isExpanded(self.proxy.mapFromSource(self.model.index_of(name)))]

    def load(self, host: Host, caps: Capabilities,
             done: Callable[[list[Dataset]], None]) -> None:
        """Read the inventory on a worker thread; `done` gets it on the GUI thread."""
        self._generation += 1
        generation = self._generation
        self.loading = True
        self.busy.show()
        self.status.setText(f"Reading datasets on {host.label}…")
        style.set_role(self.status, "muted")

        def ok(read: tuple[list[Dataset], Nodes]) -> None:
            if generation != self._generation:
                return
            datasets, built = read
            self.loading = False
            self.busy.hide()
            self.status.setText("")
            self.show(datasets, built)
            # A big pool's inventory (and the model's nodes) lives as long as the page: out of
            # the cyclic collector's sight, whose full passes walk every tracked object and
            # stalled the window for ~100 ms beside 10,000 snapshots. (Freed by reference
            # counting all the same: nothing in it is a cycle.)
            gc.freeze()
            done(datasets)

        def failed(exc: Exception) -> None:
            if generation != self._generation:
                return
            self.loading = False
            self.busy.hide()
            self.status.setText(words.error_html(exc))
            style.set_role(self.status, "")

        with_snapshots = self.model.with_snapshots

        def read() -> tuple[list[Dataset], Nodes]:
            datasets = inventory(host, caps)
            return datasets, build_nodes(datasets, with_snapshots)

        run_task(lambda: without_collection(read), ok, failed)

    def show(self, datasets: list[Dataset], built: Nodes | None = None) -> None:
        """Show `datasets` (their nodes `built` already, off the GUI thread, for `load`)."""
        self.model.adopt(built if built is not None
                         else build_nodes(datasets, self.model.with_snapshots))
        # Open the pools (and one more level when there are few datasets).
        depth = 1 if len(datasets) < 40 else 0
        self.view.expandToDepth(depth)
        # The figures' columns are fitted after the rows are laid out and painted, in an event
        # of their own: together they stalled the window ~50 ms beside a big pool (more on a
        # busy machine), apart each about half.
        QTimer.singleShot(0, self.view, self._fit_columns)

    def _fit_columns(self) -> None:
        for col in range(1, self.model.columnCount()):
            self.view.resizeColumnToContents(col)

    def select(self, name: str) -> QModelIndex:
        """Select and reveal the row of `name` (dataset or snapshot); returns its proxy index."""
        index = self.proxy.mapFromSource(self.model.index_of(name))
        if index.isValid():
            self.view.setCurrentIndex(index)
            self.view.scrollTo(index, QTreeView.ScrollHint.EnsureVisible)
        return index

    def current_item(self) -> object:
        # selectionChanged comes before currentChanged: read the selection, not the current row.
        rows = self.view.selectionModel().selectedRows(0)
        if not rows:
            return None
        return self.model.item(self.proxy.mapToSource(rows[0]))

    def cancel(self) -> None:
        """Drop the result of a load still running."""
        self._generation += 1
        self.loading = False
        self.busy.hide()
