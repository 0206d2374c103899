"""Page 2: pick the snapshot to send from the source host's tree."""

from __future__ import annotations

from PySide6.QtCore import QItemSelection
from PySide6.QtWidgets import QWidget

from ...engine.units import format_size
from ...engine.zfs import Dataset, Snapshot
from .. import forms, markup, style
from ..generated.ui_source_page import Ui_SourcePage
from ..session import Session
from ..settings import Settings
from .base import Page
from .tree_support import DatasetTree


class SourcePage(Page):
    """Tree of pool → datasets → snapshots; a dataset click picks its newest snapshot."""

    def __init__(self, session: Session, settings: Settings,
                 parent: QWidget | None = None) -> None:
        super().__init__(session, settings, parent)
        self.ui = Ui_SourcePage()
        forms.setup(self.ui, self)
        self.tree = DatasetTree(self.ui.dataset_tree, self.ui.filter_edit, self.ui.busy_bar,
                                self.ui.status_label, with_snapshots=True)
        self.ui.dataset_tree.selectionModel().selectionChanged.connect(self._on_selection)
        self.ui.reload_button.clicked.connect(self._reload)
        style.set_role(self.ui.selection_label, "muted")
        self._loaded_for: object = None

    def initializePage(self) -> None:
        s = self.session
        if s.src_host is not self._loaded_for or s.src_datasets is None:
            self._reload()

    def _reload(self) -> None:
        s = self.session
        if s.src_host is None or s.src_caps is None:
            return
        self._loaded_for = s.src_host
        s.snapshot = s.source_dataset = None
        self._show_choice()
        self.tree.load(s.src_host, s.src_caps, self._on_loaded)
        self.completeChanged.emit()

    def _on_loaded(self, datasets: list[Dataset]) -> None:
        self.session.src_datasets = datasets
        if not datasets:
            self.ui.status_label.setText(
                f"{markup.escape(self.session.src_host.label if self.session.src_host else '')} "
                "has no ZFS datasets.")
        self.completeChanged.emit()

    def _on_selection(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        item = self.tree.current_item()
        s = self.session
        if isinstance(item, Dataset):
            newest = item.newest
            if newest is not None:
                self.tree.select(newest.name)  # re-enters here with the snapshot
                return
            s.source_dataset, s.snapshot = item, None
        elif isinstance(item, Snapshot):
            s.snapshot = item
            s.source_dataset = next((d for d in s.src_datasets or [] if d.name == item.dataset),
                                    None)
        else:
            s.snapshot = s.source_dataset = None
        self._show_choice()
        self.completeChanged.emit()

    def choose(self, name: str) -> bool:
        """Pick a dataset (its newest snapshot) or snapshot by name, as a click would."""
        return self.tree.select(name).isValid()

    def _show_choice(self) -> None:
        s = self.session
        label = self.ui.selection_label
        if s.snapshot is not None and s.source_dataset is not None:
            snaps = s.source_dataset.snapshots
            position = "newest" if snaps and snaps[-1] is s.snapshot else "older"
            label.setText(
                f"Sending <b>{markup.escape(s.snapshot.name)}</b> ({position} of {len(snaps)} "
                f"snapshot{'s' if len(snaps) != 1 else ''}, refers to "
                f"{format_size(s.snapshot.referenced)}).")
            style.set_role(label, "")
        elif s.source_dataset is not None:
            label.setText(
                f"{markup.escape(s.source_dataset.name)} has no snapshot yet. Take one on the "
                f"source (<code>zfs snapshot {markup.escape(s.source_dataset.name)}@now</code>) "
                "and reload.")
            style.set_role(label, "note")
        else:
            label.setText("Choose a dataset or one of its snapshots.")
            style.set_role(label, "muted")

    def isComplete(self) -> bool:
        return self.session.snapshot is not None and not self.tree.loading

    def cleanupPage(self) -> None:
        self.tree.cancel()
