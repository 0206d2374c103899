"""The wizard's Review page says what its preflight stopped on the destination: the listener and
`zfs receive` an earlier run left there, whose connection is gone (lab: a real listener on
lab-dst whose run stopped its heartbeat, its SSH session still open as across a dead link)."""

from __future__ import annotations

import pytest
from lab.plugin import Lab, Pool
from lab.util import write_random_files, zfs
from pytestqt.qtbot import QtBot
from wizard_driver import WAIT_LOAD, to_destination, to_source

from zmigrate.engine import cmdline
from zmigrate.engine.hosts import HEARTBEAT
from zmigrate.engine.hosts.login import HostSpec, connect
from zmigrate.engine.job.step.port import free_port
from zmigrate.gui.pages.base import PageId
from zmigrate.gui.wizard import MigrationWizard

pytestmark = [pytest.mark.gui, pytest.mark.lab, pytest.mark.timeout(180)]


def test_review_says_it_stopped_a_gone_runs_leftovers(qtbot: QtBot, wizard: MigrationWizard,
                                                     lab_env: Lab,
                                                     pools: tuple[Pool, Pool]) -> None:
    src_pool, dst_pool = pools
    dataset = f"{src_pool.name}/data"
    zfs("create", dataset)
    write_random_files(src_pool.mountpoint / "data", 2, files=2)
    zfs("snapshot", f"{dataset}@one")
    gone = connect(HostSpec("lab-dst"))
    try:
        port = free_port(gone)
        listener = gone.spawn(cmdline.pipe(
            cmdline.join(["mbuffer", "-q", "-I", f"127.0.0.1:{port}"]),
            cmdline.join(["zfs", "receive", f"{dst_pool.name}/copy"])))
        pgid = listener.pgid
        assert pgid is not None
        qtbot.wait(int(3 * HEARTBEAT * 1000))  # its lease is written
        gone._closed.set()  # its heartbeat stops; the session (the lifeline) stays open
        w = wizard
        to_source(qtbot, w)
        to_destination(qtbot, w, dataset)
        w.destination_page.ui.parent_edit.setText(dst_pool.name)
        w.destination_page.ui.name_edit.setText("copy")
        w.next()
        assert w.currentId() == PageId.TRANSPORT
        w.next()
        assert w.currentId() == PageId.REVIEW
        qtbot.waitUntil(lambda: not w.review_page.preparing, timeout=WAIT_LOAD)
        assert w.review_page.isComplete(), w.review_page.ui.error_label.text()
        notes = w.review_page.ui.warnings_label.text()
        assert f"stopping what an earlier zmigrate run left on lab-dst ({gone.tag}" in notes
        assert "zfs receive" in notes and f"stopped 2 leftover process(es) of {gone.tag}" in notes
        assert not gone.group_alive(pgid)
    finally:
        gone.close()
