"""Picking a tree on the Source page: check boxes, what is left out, totals, snapshot-now."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from zmigrate.engine.zfs import Dataset, Snapshot
from zmigrate.gui.models.dataset_tree_model import DatasetTreeModel
from zmigrate.gui.models.tree_pick import RECENT, TreePick
from zmigrate.gui.pages.source_page import SourcePage
from zmigrate.gui.session import Session
from zmigrate.gui.settings import Settings

pytestmark = pytest.mark.gui

MiB = 2**20
NOW = int(time.time())


def ds(name: str, referenced: int, snaps: list[tuple[str, int]], kind: str = "filesystem",
       ) -> Dataset:
    d = Dataset(name, kind, hash(name) & 0xFFFF, referenced, referenced, 1 << 40, NOW - 10_000)
    for i, (short, age) in enumerate(snaps):
        d.snapshots.append(Snapshot(f"{name}@{short}", hash((name, short)) & 0xFFFFFF,
                                    NOW - age, 100 + i, 0, referenced))
    return d


def tank() -> list[Dataset]:
    """tank/data with three children (one a volume, one nested), older snapshots on some."""
    return [
        ds("tank", 1 * MiB, []),
        ds("tank/data", 10 * MiB, [("old", 2 * RECENT), ("daily", 600)]),
        ds("tank/data/a", 20 * MiB, [("old", 2 * RECENT), ("daily", 600)]),
        ds("tank/data/a/deep", 5 * MiB, [("daily", 600)]),
        ds("tank/data/vol", 40 * MiB, [("daily", 600)], kind="volume"),
        ds("tank/data/b", 3 * MiB, []),
        ds("tank/other", 7 * MiB, [("daily", 600)]),
    ]


def test_pick_takes_the_root_and_its_descendants_parents_first() -> None:
    pick = TreePick.of(tank(), "tank/data")
    assert [d.name for d in pick.members] == [
        "tank/data", "tank/data/a", "tank/data/b", "tank/data/vol", "tank/data/a/deep"]
    assert pick.has_children
    assert pick.totals() == (78 * MiB, 5, 6)  # the volume counts
    assert pick.excludes() == ()


def test_unticking_leaves_a_child_and_its_descendants_out() -> None:
    pick = TreePick.of(tank(), "tank/data")
    pick.set_ticked("tank/data/a", False)
    assert [d.name for d in pick.picked()] == ["tank/data", "tank/data/b", "tank/data/vol"]
    assert not pick.included("tank/data/a/deep")
    assert pick.totals() == (53 * MiB, 3, 3)
    pick.set_ticked("tank/data/a/deep", False)  # already out: no second exclude
    assert pick.excludes() == ("tank/data/a",)
    pick.set_ticked("tank/data", False)  # the root cannot be left out
    assert pick.included("tank/data")
    pick.set_ticked("tank/data/a", True)
    assert pick.excludes() == ("tank/data/a/deep",)


def test_snapshot_now_is_needed_when_the_picked_share_no_snapshot() -> None:
    pick = TreePick.of(tank(), "tank/data")
    assert pick.common_snapshot() is None  # tank/data/b has none
    pick.set_ticked("tank/data/b", False)
    assert pick.common_snapshot() == "daily"
    assert pick.recent_common_snapshot() == "daily"
    assert pick.recent_common_snapshot(now=NOW + 2 * RECENT) is None  # too old by then


def test_tree_model_shows_check_boxes_for_the_children_only(
        qtmodeltester: ModelTester) -> None:
    model = DatasetTreeModel(with_snapshots=True)
    model.set_datasets(tank())
    pick = TreePick.of(tank(), "tank/data")
    model.set_pick(pick)
    qtmodeltester.check(model)
    root, child = model.index_of("tank/data"), model.index_of("tank/data/a")
    other = model.index_of("tank/other")
    assert not model.flags(root) & Qt.ItemFlag.ItemIsUserCheckable
    assert not model.flags(other) & Qt.ItemFlag.ItemIsUserCheckable
    assert model.flags(child) & Qt.ItemFlag.ItemIsUserCheckable
    assert model.data(child, Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
    assert model.setData(child, Qt.CheckState.Unchecked, Qt.ItemDataRole.CheckStateRole)
    deep = model.index_of("tank/data/a/deep")
    assert model.data(deep, Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Unchecked
    assert pick.excludes() == ("tank/data/a",)
    assert not model.setData(root, Qt.CheckState.Unchecked, Qt.ItemDataRole.CheckStateRole)


def source_page(qtbot: QtBot, settings: Settings, datasets: list[Dataset]) -> SourcePage:
    page = SourcePage(Session(), settings)
    qtbot.addWidget(page)
    page.session.src_datasets = datasets
    page.tree.show(datasets)
    return page


def test_source_page_picks_a_tree_with_totals_and_snapshot_now(
        qtbot: QtBot, settings: Settings) -> None:
    page = source_page(qtbot, settings, tank())
    assert page.choose("tank/data")
    s = page.session
    assert s.tree is not None and s.tree.root == "tank/data"
    assert not page.ui.tree_frame.isHidden()
    assert page.ui.tree_label.text().startswith("5 datasets, 6 snapshots, 78 MiB of data")
    # No snapshot shared by all five: snapshot now is the default and the only choice.
    assert s.take_snapshot and page.ui.snapshot_now_radio.isChecked()
    assert not page.ui.snapshot_existing_radio.isEnabled()
    assert "zmigrate-YYYYMMDD-HHMMSS" in page.ui.selection_label.text()
    assert "older snapshots travel with the full copy" in page.ui.selection_label.text()
    assert page.isComplete()
    # Leaving out the child without a snapshot: they share a recent @daily, now the default.
    assert page.set_ticked("tank/data/b", False)
    assert not s.take_snapshot and s.tree_snapshot == "daily"
    assert page.ui.tree_label.text().startswith("4 datasets (1 left out), 6 snapshots")
    assert "@daily" in page.ui.selection_label.text()
    page.ui.snapshot_now_radio.setChecked(True)
    assert s.take_snapshot and s.tree_snapshot is None


def test_the_older_snapshots_are_those_before_the_one_sent(
        qtbot: QtBot, settings: Settings) -> None:
    """Up to an existing snapshot, it and the newer ones are not "older"; snapshot now makes
    every existing one older."""
    data = [ds("pool", MiB, [("mon", 3000), ("tue", 2000)]),
            ds("pool/db", MiB, [("mon", 3000), ("tue", 2000), ("before-upgrade", 1000)])]
    pick = TreePick.of(data, "pool")
    assert pick.older_snapshots("tue") == 2
    assert pick.older_snapshots(None) == 5
    page = source_page(qtbot, settings, data)
    assert page.choose("pool")
    assert page.session.tree_snapshot == "tue"
    assert "Their 2 older snapshots travel" in page.ui.selection_label.text()
    page.ui.snapshot_now_radio.setChecked(True)
    assert "Their 5 older snapshots travel" in page.ui.selection_label.text()


def test_a_dataset_without_snapshot_no_longer_dead_ends(
        qtbot: QtBot, settings: Settings) -> None:
    page = source_page(qtbot, settings, tank())
    assert page.choose("tank/data/b")
    s = page.session
    assert s.tree is not None and not s.tree.has_children
    assert s.take_snapshot and page.isComplete()
    assert "no snapshot yet" not in page.ui.selection_label.text()


def test_a_snapshot_or_children_off_is_the_single_dataset_transfer(
        qtbot: QtBot, settings: Settings) -> None:
    page = source_page(qtbot, settings, tank())
    assert page.choose("tank/data@old")
    s = page.session
    assert s.tree is None and s.snapshot is not None and s.snapshot.name == "tank/data@old"
    assert page.ui.tree_frame.isHidden()
    assert page.choose("tank/data")
    assert s.tree is not None
    page.ui.children_check.setChecked(False)
    assert s.tree is None and s.snapshot is not None and s.snapshot.name == "tank/data@daily"
    assert page.isComplete()
