"""Page 2: pick the snapshot to send, or a dataset with its children (a tree), on the source."""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, Qt
from PySide6.QtWidgets import QWidget

from ...engine.units import format_size
from ...engine.zfs import Dataset, Snapshot
from .. import forms, markup, style
from ..generated.ui_source_page import Ui_SourcePage
from ..models.tree_pick import TreePick
from ..session import Session
from ..settings import Settings
from ..widgets.dataset_tree import DatasetTree
from .base import Page


class SourcePage(Page):
    """Tree of pool → datasets → snapshots.

    A snapshot click sends that snapshot of one dataset. A dataset click picks a tree: the
    dataset with its children (each with a check box, ticked), or the dataset alone when
    "with its child datasets" is off and it has a snapshot (then its newest one is picked).
    """

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
        style.set_role(self.ui.tree_label, "muted")
        self.tree.model.pick_changed.connect(self._on_pick_changed)
        self.ui.children_check.toggled.connect(self._on_children_toggled)
        self.ui.snapshot_now_radio.toggled.connect(self._on_snapshot_mode)
        self.ui.tree_frame.hide()
        self._loaded_for: object = None
        self._following = False

    def initializePage(self) -> None:
        self.forget_complete()
        s = self.session
        if s.src_host is not self._loaded_for or s.src_datasets is None:
            self._reload()

    def _reload(self) -> None:
        s = self.session
        if s.src_host is None or s.src_caps is None:
            return
        self._loaded_for = s.src_host
        s.snapshot = s.source_dataset = None
        self._set_tree(None)
        self._show_choice()
        self.tree.load(s.src_host, s.src_caps, self._on_loaded)
        self.complete_changed()

    def _on_loaded(self, datasets: list[Dataset]) -> None:
        self.session.src_datasets = datasets
        if not datasets:
            self.ui.status_label.setText(
                f"{markup.escape(self.session.src_host.label if self.session.src_host else '')} "
                "has no ZFS datasets.")
        self.complete_changed()

    def _on_selection(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        if self._following or self.tree.filtering:
            # The model's own change while we follow a click (its proxy lays the rows out
            # again and the selection model says so), or rows a filter hides: no new choice.
            return
        self._following = True
        try:
            self._follow_selection()
        finally:
            self._following = False

    def _follow_selection(self) -> None:
        item = self.tree.current_item()
        s = self.session
        if isinstance(item, Dataset):
            newest = item.newest
            checked = self.ui.children_check.isChecked()
            if s.tree is not None and s.tree.root == item.name \
                    and (newest is None or (s.tree.has_children and checked)):
                return  # the same tree again: keep what was unticked
            pick = TreePick.of(s.src_datasets or [], item.name)
            if newest is not None and not (pick.has_children and checked):
                self.tree.select(newest.name)
                self._follow_selection()  # now with the snapshot
                return
            s.source_dataset, s.snapshot = item, newest
            self._set_tree(pick)
        elif isinstance(item, Snapshot):
            s.snapshot = item
            s.source_dataset = next((d for d in s.src_datasets or [] if d.name == item.dataset),
                                    None)
            self._set_tree(None)
        else:
            s.snapshot = s.source_dataset = None
            self._set_tree(None)
        self._show_choice()
        self.complete_changed()

    def choose(self, name: str) -> bool:
        """Pick a snapshot, or a dataset (a tree when it has children), as a click would."""
        return self.tree.select(name).isValid()

    def choose_tree(self, root: str, excludes: tuple[str, ...] = (),
                    take_snapshot: bool | None = None) -> bool:
        """Pick `root` with its children minus `excludes` (and their descendants)."""
        self.ui.children_check.setChecked(True)
        if not self.choose(root) or self.session.tree is None:
            return False
        if self.session.tree.tick_all():  # the same tree picked before: start from all of it
            self.tree.model.set_pick(self.session.tree)
        for name in excludes:
            self.set_ticked(name, False)
        if take_snapshot is not None:
            (self.ui.snapshot_now_radio if take_snapshot
             else self.ui.snapshot_existing_radio).setChecked(True)
        return True

    def set_ticked(self, name: str, ticked: bool) -> bool:
        """Tick or untick a child of the picked tree through the model, as a click would."""
        index = self.tree.model.index_of(name)
        state = Qt.CheckState.Checked if ticked else Qt.CheckState.Unchecked
        return index.isValid() and self.tree.model.setData(
            index, state, Qt.ItemDataRole.CheckStateRole)

    # -- the tree -----------------------------------------------------------------------------
    def _set_tree(self, pick: TreePick | None) -> None:
        s = self.session
        s.tree = pick
        self.tree.model.set_pick(pick)
        self.ui.tree_frame.setVisible(pick is not None)
        self.ui.children_check.setEnabled(pick is not None and pick.has_children)
        if pick is None:
            s.take_snapshot, s.tree_snapshot = False, None
            return
        if pick.has_children:
            self.ui.dataset_tree.expand(self.tree.proxy.mapFromSource(
                self.tree.model.index_of(pick.root)))
        self._default_snapshot_mode()

    def _default_snapshot_mode(self) -> None:
        """Snapshot now unless the picked datasets share a recent snapshot."""
        pick = self.session.tree
        if pick is None:
            return
        recent = pick.recent_common_snapshot()
        shared = pick.common_snapshot()
        self.ui.snapshot_existing_radio.setEnabled(shared is not None)
        self.ui.snapshot_existing_radio.setText(
            f"Send @{shared}, the newest snapshot they share" if shared
            else "Send an existing snapshot (none is shared by all)")
        (self.ui.snapshot_existing_radio if recent else self.ui.snapshot_now_radio).setChecked(True)
        self._on_snapshot_mode()

    def _on_snapshot_mode(self, _checked: bool = False) -> None:
        s = self.session
        pick = s.tree
        if pick is None:
            return
        shared = pick.common_snapshot()
        s.take_snapshot = self.ui.snapshot_now_radio.isChecked() or shared is None
        s.tree_snapshot = None if s.take_snapshot else shared
        self._show_choice()
        self.complete_changed()

    def _on_pick_changed(self) -> None:
        self._default_snapshot_mode()

    def _on_children_toggled(self, _on: bool) -> None:
        item = self.session.source_dataset
        if item is not None:
            self.tree.select(item.name)
            self._on_selection(QItemSelection(), QItemSelection())

    def _show_choice(self) -> None:
        s = self.session
        label = self.ui.selection_label
        if s.tree is not None:
            self._show_tree(s.tree)
            return
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

    def _show_tree(self, pick: TreePick) -> None:
        s = self.session
        size, count, snaps = pick.totals()
        left_out = len(pick.members) - count
        self.ui.tree_label.setText(
            f"{count} dataset{'s' if count != 1 else ''}"
            + (f" ({left_out} left out)" if left_out else "")
            + f", {snaps} snapshot{'s' if snaps != 1 else ''}, {format_size(size)} of data.")
        root = markup.escape(pick.root)
        if s.take_snapshot:
            what = ("a new snapshot <code>@zmigrate-YYYYMMDD-HHMMSS</code> (UTC) taken when "
                    "the transfer starts")
        else:
            what = f"<b>@{markup.escape(s.tree_snapshot or '')}</b>"
        older = pick.older_snapshots(None if s.take_snapshot else s.tree_snapshot)
        history = (f" Their {older} older snapshot{'s' if older != 1 else ''} travel with the "
                   "full copy (history)." if older else "")
        self.ui.selection_label.setText(
            f"Sending <b>{root}</b>" + (" with its children" if pick.has_children else "")
            + f" up to {what}.{history}")
        style.set_role(self.ui.selection_label, "")

    def isComplete(self) -> bool:
        s = self.session
        if self.tree.loading:
            return False
        if s.tree is not None:
            return s.take_snapshot or s.tree_snapshot is not None
        return s.snapshot is not None

    def cleanupPage(self) -> None:
        self.tree.cancel()
