"""Review names what the run will destroy (lab): a forced rollback's snapshot under
"Will be destroyed on HOST:", and the transfer destroys exactly that."""

from __future__ import annotations

import pytest
from lab.plugin import Lab, Pool
from lab.util import zfs
from pytestqt.qtbot import QtBot
from wizard_driver import (
    WAIT_LOAD,
    WAIT_TRANSFER,
    start_transfer,
    to_destination,
    to_review,
    to_source,
)

from zmigrate.engine.hosts import Host
from zmigrate.engine.job import Job, Request
from zmigrate.gui.pages.base import PageId
from zmigrate.gui.wizard import MigrationWizard

pytestmark = [pytest.mark.gui, pytest.mark.lab, pytest.mark.timeout(180)]


def test_review_lists_the_snapshot_a_forced_rollback_destroys(
        qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab, lab_hosts: tuple[Host, Host],
        pools: tuple[Pool, Pool]) -> None:
    src_pool, dst_pool = pools
    dataset = f"{src_pool.name}/data"
    copy = f"{dst_pool.name}/copy"
    zfs("create", dataset)
    zfs("snapshot", f"{dataset}@one")
    Job(*lab_hosts, Request(f"{dataset}@one", copy)).run()
    zfs("snapshot", f"{copy}@local-change")
    zfs("snapshot", f"{dataset}@two")
    w = wizard
    to_source(qtbot, w)
    to_destination(qtbot, w, dataset)
    w.destination_page.ui.parent_edit.setText(dst_pool.name)
    w.destination_page.ui.name_edit.setText("copy")
    qtbot.waitUntil(lambda: w.destination_page.ui.force_check.isVisible(), timeout=WAIT_LOAD)
    w.destination_page.ui.force_check.setChecked(True)
    to_review(qtbot, w)
    text = w.review_page.ui.summary_label.text()
    assert "<b>Will be destroyed on lab-dst:</b>" in text, text
    assert f"snapshot {copy}@local-change (newer than @one)" in text, text
    start_transfer(w)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    assert w.session.summary is not None, w.done_page.ui.reason_label.text()
    names = zfs("list", "-H", "-o", "name", "-t", "snapshot", "-r", copy).split()
    assert names == [f"{copy}@one", f"{copy}@two"]
