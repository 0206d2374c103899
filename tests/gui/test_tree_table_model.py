"""The Transfer page's dataset table, fed by per-dataset state events."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import pytest
from PySide6.QtCore import Qt
from pytestqt.modeltest import ModelTester

from zmigrate.gui.models.tree_table_model import STATE_ROLE, Column, TreeTableModel

pytestmark = pytest.mark.gui

MiB = 2**20


class Status(str, Enum):  # the shape of engine.events.DatasetStatus
    WAITING = "waiting"
    SENDING = "sending"
    VERIFIED = "verified"
    SKIPPED = "skipped"
    FAILED = "failed"
    VANISHED = "vanished"


@dataclass(frozen=True)
class State:  # the shape of engine.events.DatasetState
    dataset: str
    destination: str
    index: int
    count: int
    status: Status
    size: int | None = None
    bytes: int = 0
    rate: float = 0.0
    detail: str = ""


NAMES = ["tank/data", "tank/data/a", "tank/data/b"]


def waiting(model: TreeTableModel) -> None:
    # Announced out of order on purpose: rows follow the tree's order, not arrival.
    for k in (2, 0, 1):
        model.apply(State(NAMES[k], "backup/" + NAMES[k], k, 3, Status.WAITING, (k + 1) * MiB))


def test_rows_follow_the_tree_order_and_states(qtmodeltester: ModelTester) -> None:
    model = TreeTableModel()
    waiting(model)
    qtmodeltester.check(model)
    assert [r.dataset for r in model.rows] == NAMES
    assert model.states() == dict.fromkeys(NAMES, "waiting")
    assert model.data(model.index(1, Column.SIZE)) == "2 MiB"
    model.apply(State(NAMES[0], "backup/tank/data", 0, 3, Status.SENDING, MiB))
    assert model.sending() == "tank/data"
    model.set_live_rate("tank/data", 5 * MiB, MiB // 2)
    assert model.data(model.index(0, Column.RATE)) == "5 MiB/s"
    assert model.data(model.index(0, Column.SIZE)) == "512 KiB of 1 MiB"
    model.set_live_rate("tank/data/a", 9.0, 1)  # not sending: ignored
    assert model.row_of("tank/data/a") is not None
    assert model.row_of("tank/data/a").rate == 0.0  # type: ignore[union-attr]
    model.apply(State(NAMES[0], "backup/tank/data", 0, 3, Status.VERIFIED, MiB, MiB, 4 * MiB))
    model.apply(State(NAMES[1], "backup/tank/data/a", 1, 3, Status.SKIPPED, 0,
                      detail="@snap already there"))
    model.apply(State(NAMES[2], "backup/tank/data/b", 2, 3, Status.FAILED, 3 * MiB,
                      detail="guid differs"))
    model.apply(State("backup/tank/gone", "backup/tank/gone", -1, 3, Status.VANISHED))
    qtmodeltester.check(model)
    assert model.states() == {"tank/data": "verified", "tank/data/a": "skipped",
                              "tank/data/b": "failed", "backup/tank/gone": "vanished"}
    assert model.rows[-1].dataset == "backup/tank/gone"  # after the tree's datasets
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
    model.apply(State(NAMES[2], "x", 2, 3, Status.SENDING))
    assert seen == [2]
    assert model.rows[2].size == 3 * MiB  # a state without a size keeps the known one
