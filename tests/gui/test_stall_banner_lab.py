"""The Transfer page over a real stalled lab transfer: the destination's zfs receive is held
(its process group stopped with SIGSTOP); the page shows the stall banner naming the
destination and "stalled for" in place of the time left; once it goes on, the transfer ends
verified. The Transport page's "If the transfer stalls" choice reaches the job."""

from __future__ import annotations

import os
import signal
from dataclasses import replace

import pytest
from lab.plugin import Lab, Pool
from lab.util import receive_group, snapshot_guid, write_random_files, zfs
from pytestqt.qtbot import QtBot
from wizard_driver import WAIT_LOAD, WAIT_TRANSFER, start_transfer, to_destination, to_source

from zmigrate.gui.pages.base import PageId
from zmigrate.gui.wizard import MigrationWizard

pytestmark = [pytest.mark.gui, pytest.mark.lab, pytest.mark.timeout(300)]


def test_the_transfer_page_shows_a_stall_and_goes_on(qtbot: QtBot, wizard: MigrationWizard,
                                                      lab_env: Lab,
                                                      pools: tuple[Pool, Pool]) -> None:
    src_pool, dst_pool = pools
    dataset = f"{src_pool.name}/data"
    zfs("create", dataset)
    write_random_files(src_pool.mountpoint / "data", 120, files=6)
    zfs("snapshot", f"{dataset}@one")
    w = wizard
    to_source(qtbot, w)
    to_destination(qtbot, w, dataset)
    w.destination_page.ui.parent_edit.setText(dst_pool.name)
    w.destination_page.ui.name_edit.setText("copy")
    # Reported after 10 s instead of 30 (the command line's --stall-after): a shorter test.
    w.session.options = replace(w.session.options, stall_after=10.0)
    assert w.destination_page.isComplete(), w.destination_page.ui.state_label.text()
    w.next()
    assert w.currentId() == PageId.TRANSPORT
    w.transport_page.ui.rate_edit.setText("15M")
    w.transport_page.ui.stall_combo.setCurrentIndex(2)  # "Give up after 5 minutes"
    w.next()
    assert w.currentId() == PageId.REVIEW
    qtbot.waitUntil(lambda: not w.review_page.preparing, timeout=WAIT_LOAD)
    assert w.review_page.isComplete(), w.review_page.ui.error_label.text()
    plan = w.session.plan
    assert plan is not None and plan.options.stall_timeout == 300.0
    assert plan.options.stall_after == 10.0
    start_transfer(w)
    page = w.transfer_page
    qtbot.waitUntil(lambda: receive_group(f"{dst_pool.name}/copy") is not None
                    and page.last_progress is not None and page.last_progress.done > 20 << 20,
                    timeout=WAIT_TRANSFER)
    group = receive_group(f"{dst_pool.name}/copy")
    assert group is not None
    os.killpg(group, signal.SIGSTOP)
    try:
        qtbot.waitUntil(lambda: page.ui.verdict_frame.isVisible()
                        and "state T" in page.ui.verdict_label.text(), timeout=60_000)
        banner = page.ui.verdict_label.text()
        assert "Stalled: no byte has moved for" in banner and "lab-dst" in banner, banner
        assert "zfs receive" in banner and "gives up after 5 min 00 s" in banner, banner
        assert page.ui.verdict_frame.property("banner") == "warn"
        qtbot.waitUntil(lambda: "stalled for" in page.ui.progress_label.text(), timeout=5_000)
        assert "left" not in page.ui.progress_label.text()
    finally:
        os.killpg(group, signal.SIGCONT)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    assert w.session.summary is not None and w.session.summary.verified, w.session.error
    assert snapshot_guid(f"{dst_pool.name}/copy@one") == snapshot_guid(f"{dataset}@one")
