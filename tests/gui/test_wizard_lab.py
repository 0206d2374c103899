"""The wizard end to end on the real lab: two sshd "hosts" and zfs-fuse pools on loopback."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from lab.plugin import Lab, Pool
from lab.util import snapshot_guid, write_random_files, zfs, zfs_processes
from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot
from wizard_driver import (
    WAIT_CONNECT,
    WAIT_TRANSFER,
    connect_panel,
    start_transfer,
    to_destination,
    to_review,
    to_source,
    type_host,
)

from zmigrate.engine.history import History
from zmigrate.engine.hosts.login import HostKeyDecision
from zmigrate.gui.pages.base import PageId
from zmigrate.gui.wizard import MigrationWizard

pytestmark = [pytest.mark.gui, pytest.mark.lab, pytest.mark.timeout(240)]


def make_source(pool: Pool, mb: int, snaps: tuple[str, ...] = ("one",)) -> str:
    """pool/data with `mb` MiB of random files and the given snapshots; returns the dataset."""
    name = f"{pool.name}/data"
    zfs("create", name)
    write_random_files(pool.mountpoint / "data", mb, files=8)
    for s in snaps:
        zfs("snapshot", f"{name}@{s}")
    return name


def test_full_transfer_end_to_end(qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab,
                                  pools: tuple[Pool, Pool], tmp_path: Path,
                                  history_dir: Path) -> None:
    src_pool, dst_pool = pools
    dataset = make_source(src_pool, 8)
    w = wizard
    to_source(qtbot, w)
    assert "lab-src" in w.hosts_page.source.ui.status_label.text()
    to_destination(qtbot, w, dataset)  # a dataset click picks its newest snapshot
    assert w.session.snapshot is not None and w.session.snapshot.short == "one"
    w.destination_page.ui.parent_edit.setText(dst_pool.name)
    w.destination_page.ui.name_edit.setText("copy")
    assert "New dataset" in w.destination_page.ui.state_label.text()
    to_review(qtbot, w, rate_limit="4M")  # a few seconds, so the history records samples
    commands = w.review_page.ui.commands_edit.toPlainText()
    assert "# on lab-src" in commands and "zfs receive" in commands
    start_transfer(w)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    assert w.session.summary is not None, w.done_page.ui.reason_label.text()
    assert "verified" in w.done_page.ui.result_label.text()
    assert snapshot_guid(f"{dst_pool.name}/copy@one") == snapshot_guid(f"{dataset}@one")
    assert w.done_page.export_csv(tmp_path / "s.csv")
    assert (tmp_path / "s.csv").read_text().startswith("t,side,")
    assert w.done_page.save_png(tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 1000
    # Done shows the Transfer page's own plots (no second first paint at the switch).
    assert w.done_page.plots is w.transfer_page.plots
    assert w.transfer_page.plots.rates.isVisible()
    # The wizard recorded the transfer into the history (here: $ZMIGRATE_DATA_DIR).
    with History(history_dir / "history.sqlite3") as h:
        jobs = h.jobs()
        assert len(jobs) == 1
        job = jobs[0]
        assert (job.outcome, job.source, job.destination) == ("verified", "lab-src", "lab-dst")
        assert job.snapshot == f"{dataset}@one"
        assert job.destination_dataset == f"{dst_pool.name}/copy"
        assert job.bytes == w.session.summary.bytes
        assert job.sample_rows > 0
        assert len(h.samples(job.id)) == job.sample_rows
    w.done_page.ui.history_button.click()
    window = w.history_window
    assert window is not None and window.isVisible()
    qtbot.waitUntil(lambda: window.model.rowCount() == 1 and not window.loading, timeout=5000)
    assert window.proxy.index(0, 3).data() == "verified"


def test_incremental_is_detected_and_shown(qtbot: QtBot, wizard: MigrationWizard,
                                           lab_env: Lab, pools: tuple[Pool, Pool]) -> None:
    src_pool, dst_pool = pools
    dataset = make_source(src_pool, 2, ("one",))
    # Seed the destination with @one the way a previous transfer would have.
    send = subprocess.Popen(["/usr/sbin/zfs", "send", f"{dataset}@one"], stdout=subprocess.PIPE)
    subprocess.run(["/usr/sbin/zfs", "receive", f"{dst_pool.name}/data"], stdin=send.stdout,
                   check=True, timeout=120)
    assert send.wait(60) == 0
    zfs("snapshot", f"{dataset}@two")
    zfs("snapshot", f"{dataset}@three")
    w = wizard
    to_source(qtbot, w)
    to_destination(qtbot, w, dataset)
    # The destination that shares history is found on its own.
    assert w.destination_page.destination() == f"{dst_pool.name}/data"
    state = w.destination_page.ui.state_label.text()
    assert "Incremental from the common snapshot @one" in state
    assert "2 snapshots to send" in state
    assert w.destination_page.isComplete()


def test_cancel_leaves_nothing_behind(qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab,
                                      pools: tuple[Pool, Pool]) -> None:
    src_pool, dst_pool = pools
    dataset = make_source(src_pool, 60)
    w = wizard
    to_source(qtbot, w)
    to_destination(qtbot, w, dataset)
    w.destination_page.ui.parent_edit.setText(dst_pool.name)
    w.destination_page.ui.name_edit.setText("partial")
    to_review(qtbot, w, rate_limit="5M")
    start_transfer(w)
    page = w.transfer_page
    qtbot.waitUntil(lambda: w.session.store is not None and w.session.store.version > 2,
                    timeout=WAIT_TRANSFER)
    page.ui.stop_button.click()
    assert page.confirm_box is not None
    stop = next(b for b in page.confirm_box.buttons() if b.text() == "Stop transfer")
    stop.click()
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    assert w.session.cancelled
    assert "stopped" in w.done_page.ui.result_label.text()
    assert zfs_processes() == []
    names = zfs("list", "-H", "-o", "name", "-r", dst_pool.name).split()
    assert f"{dst_pool.name}/partial" not in names


def test_event_loop_stays_responsive_during_a_transfer(
        qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab, pools: tuple[Pool, Pool]) -> None:
    src_pool, dst_pool = pools
    dataset = make_source(src_pool, 60)
    w = wizard
    to_source(qtbot, w)
    to_destination(qtbot, w, dataset)
    w.destination_page.ui.parent_edit.setText(dst_pool.name)
    w.destination_page.ui.name_edit.setText("fast")
    to_review(qtbot, w, rate_limit="20M")
    gaps: list[float] = []
    last = [time.monotonic()]

    def tick() -> None:
        now = time.monotonic()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick)
    start_transfer(w)
    last[0] = time.monotonic()
    timer.start()
    qtbot.waitUntil(lambda: w.transfer_page.is_done, timeout=WAIT_TRANSFER)
    timer.stop()
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    assert w.session.summary is not None, w.done_page.ui.reason_label.text()
    assert w.session.summary.seconds > 2, "the transfer should last a few seconds"
    assert len(gaps) > 100
    # The first gap includes the Transfer page's set-up; the rest is the running transfer.
    # The feature is "no blocking remote call on the GUI thread"; such a call (ssh, zfs) takes
    # hundreds of ms at least, while a loaded 2-core machine can delay a 10 ms timer by
    # ~100 ms. 0.5 s separates the two.
    assert max(gaps[1:]) < 0.5, f"event loop blocked for {max(gaps[1:]) * 1000:.0f} ms"


@pytest.fixture
def empty_known_hosts(lab_env: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "known_hosts"
    path.write_text("")
    monkeypatch.setenv("ZMIGRATE_KNOWN_HOSTS", str(path))
    return path


@pytest.mark.parametrize("decision", [HostKeyDecision.ACCEPT_AND_REMEMBER,
                                      HostKeyDecision.REJECT])
def test_unknown_host_key_dialog(qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab,
                                 empty_known_hosts: Path, decision: HostKeyDecision) -> None:
    panel = wizard.hosts_page.source
    type_host(panel, "lab-src")
    panel.ui.connect_button.click()
    qtbot.waitUntil(lambda: panel.dialogs.host_key_dialog is not None, timeout=WAIT_CONNECT)
    dialog = panel.dialogs.host_key_dialog
    assert dialog is not None
    assert dialog.ui.fingerprint_label.text() == lab_env.src.host_key_fingerprint
    panel.dialogs.answer_host_key(decision)
    qtbot.waitUntil(lambda: not panel.busy, timeout=WAIT_CONNECT)
    if decision is HostKeyDecision.REJECT:
        assert not panel.connected
        text = panel.ui.status_label.text()
        assert "was not accepted" in text and "Fix:" in text
        assert empty_known_hosts.read_text() == ""
    else:
        assert panel.connected
        assert lab_env.src.known_hosts_entry in empty_known_hosts.read_text()


def test_failed_connection_shows_cause_and_fix(qtbot: QtBot, wizard: MigrationWizard,
                                               lab_env: Lab, tmp_path: Path) -> None:
    from lab.util import free_port

    panel = wizard.hosts_page.destination
    type_host(panel, "127.0.0.1")
    panel.ui.port_spin.setValue(free_port())  # nothing listens there
    panel.ui.connect_button.click()
    qtbot.waitUntil(lambda: not panel.busy, timeout=WAIT_CONNECT)
    assert not panel.connected
    text = panel.ui.status_label.text()
    assert "cannot reach 127.0.0.1" in text
    assert "Fix: Check the host name, the port and that sshd runs there" in text
    assert not wizard.hosts_page.isComplete()


def test_same_host_shares_one_session(qtbot: QtBot, wizard: MigrationWizard,
                                      lab_env: Lab) -> None:
    pages = wizard.hosts_page
    connect_panel(qtbot, pages.source, "lab-src")
    connect_panel(qtbot, pages.destination, "lab-src")
    assert pages.source.host is pages.destination.host
    assert wizard.session.owned == [pages.source.host]
