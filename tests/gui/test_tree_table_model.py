"""The Transfer page's dataset table, fed by per-dataset state events."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from zmigrate.engine.events import DatasetState, Progress
from zmigrate.engine.tree import FAILED, SENDING, SKIPPED, VERIFIED, WAITING
from zmigrate.engine.zfs import Dataset
from zmigrate.gui.models.tree_pick import TreePick
from zmigrate.gui.models.tree_table_model import STATE_ROLE, Column, TreeTableModel
from zmigrate.gui.pages.transfer_page import TransferPage
from zmigrate.gui.session import Session
from zmigrate.gui.settings import Settings

pytestmark = pytest.mark.gui

MiB = 2**20


NAMES = ["tank/data", "tank/data/a", "tank/data/b"]


def waiting(model: TreeTableModel) -> None:
    # Announced out of order on purpose: rows follow the tree's order, not arrival.
    for k in (2, 0, 1):
        model.apply(DatasetState(NAMES[k], "backup/" + NAMES[k], WAITING, k, 3, (k + 1) * MiB))


def test_rows_follow_the_tree_order_and_states(qtmodeltester: ModelTester) -> None:
    model = TreeTableModel()
    waiting(model)
    qtmodeltester.check(model)
    assert [r.dataset for r in model.rows] == NAMES
    assert model.states() == dict.fromkeys(NAMES, "waiting")
    assert model.data(model.index(1, Column.SIZE)) == "2 MiB"
    model.apply(DatasetState(NAMES[0], "backup/tank/data", SENDING, 0, 3, MiB))
    assert model.sending() == "tank/data"
    model.set_live_rate(0, 5 * MiB)  # the tree's Progress: step 1 is row 0
    assert model.data(model.index(0, Column.RATE)) == "5 MiB/s"
    model.set_live_rate(1, 9.0)  # not sending: ignored
    row = model.row_of("tank/data/a")
    assert row is not None and row.rate == 0.0
    model.apply(DatasetState(NAMES[0], "backup/tank/data", VERIFIED, 0, 3, MiB, MiB, 4 * MiB))
    model.apply(DatasetState(NAMES[1], "backup/tank/data/a", SKIPPED, 1, 3, 0,
                             detail="@snap already there"))
    model.apply(DatasetState(NAMES[2], "backup/tank/data/b", FAILED, 2, 3, 3 * MiB,
                             detail="guid differs"))
    qtmodeltester.check(model)
    assert model.states() == {"tank/data": "verified", "tank/data/a": "skipped",
                              "tank/data/b": "failed"}
    assert model.data(model.index(0, Column.SIZE)) == "1 MiB"
    assert model.data(model.index(0, Column.RATE)) == "4 MiB/s"
    assert model.data(model.index(2, Column.STATE), STATE_ROLE) == "failed"
    assert "guid differs" in str(model.data(model.index(2, 0), Qt.ItemDataRole.ToolTipRole))
    assert model.sending() is None
    model.clear()
    assert model.rowCount() == 0


def test_every_row_change_is_signalled() -> None:
    model = TreeTableModel()
    waiting(model)
    seen: list[int] = []
    model.dataChanged.connect(lambda top, _bottom, _roles=None: seen.append(top.row()))
    model.apply(DatasetState(NAMES[2], "x", SENDING, 2, 3, 3 * MiB))
    assert seen == [2]
    assert model.rows[2].size == 3 * MiB


def tree_transfer_page(qtbot: QtBot, settings: Settings) -> TransferPage:
    """The Transfer page of a session with the tree NAMES, every dataset waiting."""
    session = Session()
    session.tree = TreePick.of([Dataset(n, "filesystem", 1, MiB, MiB, 1, 0) for n in NAMES],
                               NAMES[0])
    page = TransferPage(session, settings)
    qtbot.addWidget(page)
    waiting(page.datasets)
    return page


def test_transfer_line_counts_datasets_done_and_in_flight_not_the_last_reporter(
        qtbot: QtBot, settings: Settings) -> None:
    """With datasets sent in parallel, "dataset N of M" named only the last one to report
    (N could be 3 while 1 was done): the line says how many are done and how many in flight."""
    page = tree_transfer_page(qtbot, settings)
    page.datasets.apply(DatasetState(NAMES[0], "b/0", VERIFIED, 0, 3, MiB))
    for k in (1, 2):
        page.datasets.apply(DatasetState(NAMES[k], f"b/{k}", SENDING, k, 3, MiB))
    page.last_progress = Progress(4.0, 2 * MiB, 6 * MiB, MiB, 4.0, 3, 3)
    page._show_progress()
    text = page.ui.progress_label.text()
    assert "1 of 3 datasets done, 2 sending" in text, text
    assert "dataset 3 of 3" not in text
    # The tree's rate is both in flight; a row shows its own.
    page._on_progress(Progress(5.0, 3 * MiB, 6 * MiB, 2 * MiB, 1.5, 2, 3, MiB))
    row = page.datasets.row_of(NAMES[1])
    assert row is not None and row.rate == MiB


def test_a_stage_line_names_the_dataset_it_came_from(qtbot: QtBot, settings: Settings) -> None:
    """Two datasets in flight: the stage of the second is not put under the first's name."""
    page = tree_transfer_page(qtbot, settings)
    for k in (1, 2):
        page.datasets.apply(DatasetState(NAMES[k], f"b/{k}", SENDING, k, 3, MiB))
    page._on_stage("sending", "step 1/1: full", NAMES[2])
    assert page.ui.stage_label.text() == f"{NAMES[2]} · Sending: step 1/1: full"
    page._on_stage("verifying", "checking every dataset on the destination")  # the tree's own
    assert page.ui.stage_label.text() == "Verifying: checking every dataset on the destination"
