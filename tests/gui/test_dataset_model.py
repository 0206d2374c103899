"""The inventory tree model: correct shape, newest first, and fast with 500 × 20."""

from __future__ import annotations

import time

import pytest
from PySide6.QtWidgets import QTreeView
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from zmigrate.engine.zfs import Dataset, Snapshot
from zmigrate.gui.models.dataset_tree_model import (
    NODE_ROLE,
    DatasetFilterProxy,
    DatasetTreeModel,
)

pytestmark = pytest.mark.gui

GiB = 2**30


def inventory(pools: int = 2, per_pool: int = 250, snaps: int = 20) -> list[Dataset]:
    """`pools` pools with `per_pool` datasets (some nested), each with `snaps` snapshots."""
    out = []
    txg = 1
    for p in range(pools):
        pool = f"tank{p}"
        out.append(Dataset(pool, "filesystem", 1000 + p, 10 * GiB, 1 << 20, 50 * GiB,
                           1_700_000_000))
        for d in range(per_pool):
            name = f"{pool}/group{d % 10}" if d < 10 else f"{pool}/group{d % 10}/ds{d:03d}"
            ds = Dataset(name, "filesystem", 10_000 + p * 1000 + d, (d + 1) << 24, (d + 1) << 23,
                         50 * GiB, 1_700_000_000 + d)
            for s in range(snaps):
                txg += 1
                ds.snapshots.append(Snapshot(f"{name}@auto-{s:02d}", txg, 1_700_000_000 + s * 3600,
                                             txg, s << 20, (d + 1) << 23))
            out.append(ds)
    return out


def test_model_passes_qt_model_tester(qtmodeltester: ModelTester) -> None:
    model = DatasetTreeModel()
    model.set_datasets(inventory(pools=1, per_pool=12, snaps=3))
    qtmodeltester.check(model)
    proxy = DatasetFilterProxy()
    proxy.setSourceModel(model)
    proxy.setFilterFixedString("ds011")
    qtmodeltester.check(proxy)


def test_snapshots_come_newest_first_after_child_datasets() -> None:
    model = DatasetTreeModel()
    model.set_datasets(inventory(pools=1, per_pool=12, snaps=3))
    group = model.index_of("tank0/group1")
    names = [model.data(model.index(r, 0, group)) for r in range(model.rowCount(group))]
    assert names == ["ds011", "@auto-02", "@auto-01", "@auto-00"]
    snap = model.index_of("tank0/group1@auto-01")
    assert isinstance(model.data(snap, NODE_ROLE), Snapshot)
    assert model.parent(snap) == group


def test_500_datasets_by_20_snapshots_is_smooth(qtbot: QtBot) -> None:
    datasets = inventory(pools=2, per_pool=250, snaps=20)
    assert sum(len(d.snapshots) for d in datasets) == 10_000
    view = QTreeView()
    qtbot.addWidget(view)
    model = DatasetTreeModel(parent=view)
    proxy = DatasetFilterProxy(view)
    proxy.setSourceModel(model)
    view.setModel(proxy)
    view.resize(800, 600)
    view.show()
    start = time.perf_counter()
    model.set_datasets(datasets)
    view.expandAll()
    loaded = time.perf_counter() - start
    start = time.perf_counter()
    proxy.setFilterFixedString("ds123@auto-07")
    filtered = time.perf_counter() - start
    assert proxy.rowCount() == 2  # both pools have a ds123: kept as its ancestors
    group = proxy.index(0, 0)
    assert proxy.data(group) == "tank0"
    start = time.perf_counter()
    proxy.setFilterFixedString("")
    cleared = time.perf_counter() - start
    assert loaded < 2.0, f"loading + expanding took {loaded:.2f} s"
    assert filtered < 1.0, f"filtering took {filtered:.2f} s"
    assert cleared < 1.0, f"clearing the filter took {cleared:.2f} s"
