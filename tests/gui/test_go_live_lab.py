"""Done's Go live and Go back over the real lab: old pool -> new pool on one host."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab.gate import gate_host, go_live_cut_at
from lab.plugin import Lab, Pool
from lab.sshd import LabHost
from lab.util import wait_until, write_random_files, zfs, zmigrate
from PySide6.QtWidgets import QAbstractButton, QMessageBox
from pytestqt.qtbot import QtBot
from wizard_driver import (
    WAIT_TRANSFER,
    connect_panel,
    start_transfer,
    to_review,
    to_source,
    to_tree_destination,
    wait_review,
)

from zmigrate.gui.pages.base import PageId
from zmigrate.gui.pages.done_page import DonePage
from zmigrate.gui.pages.hosts_page import HostsPage
from zmigrate.gui.wizard import MigrationWizard

pytestmark = [pytest.mark.gui, pytest.mark.lab, pytest.mark.timeout(300)]


def _shot(w: MigrationWizard, name: str) -> None:
    """With ZMIGRATE_SCREENSHOTS=DIR, keep this state of the real run (docs/ takes them)."""
    where = os.environ.get("ZMIGRATE_SCREENSHOTS")
    if where:
        w.grab().save(str(Path(where) / f"screenshot-{name}.png"))


def _get(ds: str, prop: str) -> str:
    return zfs("get", "-H", "-o", "value", prop, ds).strip()


def _run_go_live(qtbot: QtBot, page: DonePage | HostsPage, root: str, new: str) -> None:
    """Click the page's Go live, check the commands it shows, and run them."""
    page.ui.go_live_button.click()
    qtbot.waitUntil(lambda: page.go_live.box is not None, timeout=30_000)
    box = page.go_live.box
    assert box is not None
    assert f"zfs unmount {root}/a" in box.detailedText()
    assert f"zfs mount {new}/data" in box.detailedText()
    # What it hides, by name (one host: the source's datasets it unmounts).
    assert f"Will be hidden on {page.go_live._hosts()[0].label}: dataset {root}/a unmounted" \
        in box.text(), box.text()
    _button(box, "Run them").click()


def _button(box: QMessageBox, text: str) -> QAbstractButton:
    return next(b for b in box.buttons() if b.text() == text)


def _go_back(qtbot: QtBot, page: DonePage | HostsPage, choice: str | None = None) -> str:
    """Click the page's Go back, answer its confirmation with `choice` (None: its default,
    the copy's writes carried back); its text."""
    page.ui.go_back_button.click()
    qtbot.waitUntil(lambda: page.go_live.back_box is not None, timeout=60_000)
    box = page.go_live.back_box
    assert box is not None
    text = box.text()
    button = _button(box, choice) if choice else box.defaultButton()
    assert button is not None
    button.click()
    return text


def _tree(old: Pool) -> str:
    """OLD/data with a child `a` holding two files: the tree these tests copy."""
    root = f"{old.name}/data"
    zfs("create", root)
    zfs("create", f"{root}/a")
    write_random_files(old.mountpoint / "data" / "a", 1, files=2)
    return root


def _final_sync(qtbot: QtBot, w: MigrationWizard, src: str, dst: str, root: str,
                parent: str) -> DonePage:
    """A tree copied, then its final sync, to Done (Go live offered)."""
    to_source(qtbot, w, src, dst)
    to_tree_destination(qtbot, w, root, parent=parent, name="data")
    to_review(qtbot, w)
    start_transfer(w)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    done = w.done_page
    assert not done.ui.go_live_button.isVisible()  # only after a final sync
    done.ui.final_sync_button.click()
    wait_review(qtbot, w)
    start_transfer(w)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    assert w.session.summary is not None, done.ui.reason_label.text()
    assert done.ui.go_live_button.isVisible() and not done.ui.go_back_button.isVisible()
    return done


def test_final_sync_then_go_live_and_back(qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab,
                                          pools: tuple[Pool, Pool]) -> None:
    old, new = pools
    root = _tree(old)
    w = wizard
    done = _final_sync(qtbot, w, "lab-src", "lab-src", root, new.name)  # one host
    _shot(w, "done-final")
    # A shell in the source's folder: going live stops before the first command, naming it.
    busy = subprocess.Popen(["sleep", "120"], cwd=old.mountpoint / "data" / "a")
    try:
        _run_go_live(qtbot, done, root, new.name)
        qtbot.waitUntil(lambda: "is in use by" in done.ui.go_live_label.text(), timeout=60_000)
    finally:
        busy.kill()
        busy.wait()
    said = done.ui.go_live_label.text()
    assert f"{old.mountpoint / 'data' / 'a'} is in use by PID {busy.pid}" in said, said
    assert done.ui.go_live_button.isVisible() and done.ui.go_live_button.isEnabled()
    _shot(w, "done-busy")
    assert _get(f"{root}/a", "mounted") == "yes" and _get(f"{new.name}/data", "mounted") == "no"
    _run_go_live(qtbot, done, root, new.name)
    qtbot.waitUntil(lambda: done.ui.go_back_button.isVisible(), timeout=60_000)
    assert "Live: the copy is in service" in done.ui.go_live_label.text()
    assert not done.ui.final_sync_button.isVisible()  # a sync would overwrite the live copy
    _shot(w, "done-live")
    assert _get(f"{new.name}/data/a", "mounted") == "yes"
    assert _get(f"{new.name}/data/a", "mountpoint") == str(old.mountpoint / "data" / "a")
    assert _get(f"{root}/a", "mounted") == "no"
    (old.mountpoint / "data" / "a" / "written-live").write_bytes(b"x" * 100_000)
    done.ui.go_back_button.click()
    qtbot.waitUntil(lambda: done.go_live.back_box is not None, timeout=60_000)
    box = done.go_live.back_box
    assert box is not None
    # The figures first; carrying them back is the default.
    assert "was written to it" in box.text() and f"{new.name}/data/a (" in box.text(), box.text()
    assert f"Will be hidden on lab-src: dataset {new.name}/data/a unmounted (the live copy" \
        in box.text(), box.text()
    assert box.defaultButton() is _button(box, "Carry them back, then go back")
    _shot(w, "done-go-back")
    _button(box, "Carry them back, then go back").click()
    qtbot.waitUntil(lambda: done.ui.go_live_button.isVisible(), timeout=120_000)
    said = done.ui.go_live_label.text()
    assert "Back: the copy is out of service" in said and "carried back" in said, said
    assert done.ui.sync_again_button.isVisible()
    assert _get(f"{root}/a", "mounted") == "yes" and _get(f"{new.name}/data/a",
                                                          "mounted") == "no"
    assert (old.mountpoint / "data" / "a" / "written-live").read_bytes() == b"x" * 100_000


def test_a_live_copy_destroyed_by_hand_is_offered_a_way_back_without_it(
        qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab, pools: tuple[Pool, Pool]) -> None:
    """Go back where the live copy was destroyed by hand: the confirmation names it and what
    is lost, shows only the source's undos, and going back without it serves the source
    again, writable."""
    old, new = pools
    root = _tree(old)
    w = wizard
    done = _final_sync(qtbot, w, "lab-src", "lab-src", root, new.name)
    _run_go_live(qtbot, done, root, new.name)
    qtbot.waitUntil(lambda: done.ui.go_back_button.isVisible(), timeout=60_000)
    assert wait_until(lambda: subprocess.run(["zfs", "destroy", "-r", "-f", f"{new.name}/data"],
                                             capture_output=True).returncode == 0, 20, 0.5)
    text = _go_back(qtbot, done, "Cancel")
    assert f"The copy {new.name}/data no longer exists on lab-src" in text, text
    assert "what was written to the copy while live is lost with it" in text
    assert _get(f"{root}/a", "mounted") == "no"  # cancelled: nothing changed
    qtbot.waitUntil(lambda: done.ui.go_back_button.isEnabled(), timeout=10_000)
    done.ui.go_back_button.click()
    qtbot.waitUntil(lambda: done.go_live.back_box is not None, timeout=60_000)
    box = done.go_live.back_box
    assert box is not None
    assert f"zfs mount {root}/a" in box.detailedText()
    assert f"{new.name}/data" not in box.detailedText(), box.detailedText()
    _button(box, "Go back without the copy").click()
    qtbot.waitUntil(lambda: "Back: the source is served" in done.ui.go_live_label.text(),
                    timeout=120_000)
    assert "The copy was gone" in done.ui.go_live_label.text()
    assert _get(f"{root}/a", "mounted") == "yes" and _get(f"{root}/a", "readonly") == "off"
    (old.mountpoint / "data" / "a" / "probe").write_text("x")


def test_between_two_hosts_go_live_under_another_folder_and_back(
        qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab, pools: tuple[Pool, Pool],
        tmp_path: Path) -> None:
    # lab-src and lab-dst: two sessions on the lab machine, so the copy goes live under a
    # folder of its own (its source's paths are mounted here too).
    old, new = pools
    root = _tree(old)
    done = _final_sync(qtbot, wizard, "lab-src", "lab-dst", root, new.name)
    done.ui.go_live_button.click()
    # Where the source is mounted is in use on the destination (the same machine): refused,
    # and a folder of its own asked for at once.
    qtbot.waitUntil(lambda: done.go_live.folder_dialog is not None, timeout=30_000)
    said = done.ui.go_live_label.text()
    assert "would mount over what the destination already uses" in said, said
    folder = done.go_live.folder_dialog
    assert folder is not None
    live = tmp_path / "live"
    folder.setTextValue(str(live))
    folder.accept()
    qtbot.waitUntil(lambda: done.go_live.box is not None, timeout=30_000)
    box = done.go_live.box
    assert box is not None and f"mounted under {live}" in box.text()
    assert f"zfs set mountpoint={live} {new.name}/data" in box.detailedText()
    _button(box, "Run them").click()
    qtbot.waitUntil(lambda: done.ui.go_back_button.isVisible(), timeout=60_000)
    assert sorted(os.listdir(live / "a")) == sorted(os.listdir(old.mountpoint / "data" / "a"))
    assert _get(f"{root}/a", "mounted") == "yes"  # the other host's source: untouched
    (live / "a" / "written-live").write_text("kept on the copy\n")
    text = _go_back(qtbot, done, "Leave them on the copy")
    assert "was written to it" in text, text
    qtbot.waitUntil(lambda: done.ui.go_live_button.isVisible(), timeout=60_000)
    said = done.ui.go_live_label.text()
    assert "stays on the copy only, under the snapshot @zmigrate-left-" in said, said
    assert not (old.mountpoint / "data" / "a" / "written-live").exists()
    assert "Back: the copy is out of service" in done.ui.go_live_label.text()
    assert _get(f"{new.name}/data/a", "mounted") == "no"
    assert _get(f"{new.name}/data", "readonly") == "on"


def test_after_a_restart_the_hosts_page_offers_go_live_and_back(
        qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab, pools: tuple[Pool, Pool]) -> None:
    """A final sync made earlier (here by the CLI; a window closed on Done is the same): the
    next window, once both hosts are connected, offers Go live, then Go back."""
    old, new = pools
    root, copy = _tree(old), f"{new.name}/data"
    r = lab_env.zmigrate("send", "-r", f"lab-src:{root}", f"lab-src:{copy}", "--snapshot",
                         "--buffer", "16M", "--final")
    assert r.returncode == 0, r.stderr + r.stdout
    hosts = wizard.hosts_page
    assert not hosts.ui.go_live_frame.isVisible()
    connect_panel(qtbot, hosts.source, "lab-src")
    connect_panel(qtbot, hosts.destination, "lab-src")
    qtbot.waitUntil(lambda: hosts.ui.go_live_frame.isVisible(), timeout=30_000)
    offer = hosts.ui.go_live_offer_label.text()
    assert "Ready to go live" in offer and f"lab-src:{root}" in offer, offer
    assert hosts.ui.go_live_button.isVisible() and not hosts.ui.go_back_button.isVisible()
    _shot(wizard, "hosts-go-live")
    _run_go_live(qtbot, hosts, root, new.name)
    qtbot.waitUntil(lambda: hosts.ui.go_back_button.isVisible(), timeout=60_000)
    assert "Live: the copy is in service" in hosts.ui.go_live_label.text()
    assert f"lab-src:{copy} is live" in hosts.ui.go_live_offer_label.text()
    assert _get(f"{copy}/a", "mounted") == "yes" and _get(f"{root}/a", "mounted") == "no"
    assert _get(f"{copy}/a", "mountpoint") == str(old.mountpoint / "data" / "a")
    # (zfs-fuse counts a mount's own metadata as written: carried back, or nothing to carry)
    text = _go_back(qtbot, hosts)
    assert "was written to it" in text or "Nothing was written to the copy" in text, text
    qtbot.waitUntil(lambda: hosts.ui.go_live_button.isVisible(), timeout=60_000)
    assert "Back: the copy is out of service" in hosts.ui.go_live_label.text()
    assert "Ready to go live" in hosts.ui.go_live_offer_label.text()
    assert _get(f"{root}/a", "mounted") == "yes" and _get(f"{copy}/a", "mounted") == "no"
    assert _get(f"{copy}", "readonly") == "on"


@pytest.fixture
def gate(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LabHost, Path]]:
    with gate_host(lab, tmp_path_factory) as found:
        yield found


def test_a_go_live_cut_off_is_offered_to_finish_or_undo_after_a_restart(
        qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab, pools: tuple[Pool, Pool],
        gate: tuple[LabHost, Path]) -> None:
    """The CLI's go-live killed after its 6th step (the source out of the way, the copy not
    yet live): the Hosts page says it was cut off and offers both; Go live finishes the
    recorded plan, Go back then undoes it all."""
    old, new = pools
    root, copy = _tree(old), f"{new.name}/data"
    env = lab_env.env()
    r = zmigrate(env, "send", "-r", f"lab-src:{root}", f"lab-src:{copy}", "--snapshot",
                 "--buffer", "16M", "--final")
    assert r.returncode == 0, r.stderr + r.stdout
    status, _ = go_live_cut_at(env, gate, root, copy, 6)
    assert status == -signal.SIGKILL
    assert _get(f"{root}/a", "mounted") == "no" and _get(f"{copy}/a", "mounted") == "no"
    hosts = wizard.hosts_page
    connect_panel(qtbot, hosts.source, gate[0].alias)
    connect_panel(qtbot, hosts.destination, gate[0].alias)
    qtbot.waitUntil(lambda: hosts.ui.go_live_frame.isVisible(), timeout=30_000)
    offer = hosts.ui.go_live_offer_label.text()
    assert "was cut off" in offer and "finishes going live" in offer, offer
    assert hosts.ui.go_live_button.isVisible() and hosts.ui.go_back_button.isVisible()
    hosts.ui.go_live_button.click()
    qtbot.waitUntil(lambda: hosts.go_live.box is not None, timeout=30_000)
    box = hosts.go_live.box
    assert box is not None and "Going live was cut off after" in box.text(), box.text()
    assert f"zfs unmount {root}/a" not in box.detailedText()  # done already: not again
    assert f"zfs mount {copy}/a" in box.detailedText()
    _button(box, "Run them").click()
    qtbot.waitUntil(lambda: "Live: the copy is in service" in hosts.ui.go_live_label.text(),
                    timeout=60_000)
    assert _get(f"{copy}/a", "mounted") == "yes"
    assert _get(f"{copy}/a", "mountpoint") == str(old.mountpoint / "data" / "a")
    assert not hosts.ui.go_live_button.isVisible()
    _go_back(qtbot, hosts)
    qtbot.waitUntil(lambda: hosts.ui.go_live_button.isVisible(), timeout=120_000)
    assert "Back: the copy is out of service" in hosts.ui.go_live_label.text()
    assert _get(f"{root}/a", "mounted") == "yes" and _get(f"{copy}/a", "mounted") == "no"
    assert _get(f"{root}/a", "canmount") == "on"
