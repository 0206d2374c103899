"""Done's Go live and Go back over the real lab: old pool -> new pool on one host."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from lab.plugin import Lab, Pool
from lab.util import write_random_files, zfs
from pytestqt.qtbot import QtBot
from wizard_driver import (
    WAIT_TRANSFER,
    start_transfer,
    to_review,
    to_source,
    to_tree_destination,
    wait_review,
)

from zmigrate.gui.pages.base import PageId
from zmigrate.gui.pages.done_page import DonePage
from zmigrate.gui.wizard import MigrationWizard

pytestmark = [pytest.mark.gui, pytest.mark.lab, pytest.mark.timeout(300)]


def _shot(w: MigrationWizard, name: str) -> None:
    """With ZMIGRATE_SCREENSHOTS=DIR, keep this state of the real run (docs/ takes them)."""
    where = os.environ.get("ZMIGRATE_SCREENSHOTS")
    if where:
        w.grab().save(str(Path(where) / f"screenshot-{name}.png"))


def _get(ds: str, prop: str) -> str:
    return zfs("get", "-H", "-o", "value", prop, ds).strip()


def _run_go_live(qtbot: QtBot, done: DonePage, root: str, new: str) -> None:
    """Click Go live, check the commands it shows, and run them."""
    done.ui.go_live_button.click()
    qtbot.waitUntil(lambda: done.go_live.box is not None, timeout=30_000)
    box = done.go_live.box
    assert box is not None
    assert f"zfs unmount {root}/a" in box.detailedText()
    assert f"zfs mount {new}/data" in box.detailedText()
    box.buttons()[0].click()  # "Run them"


def test_final_sync_then_go_live_and_back(qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab,
                                          pools: tuple[Pool, Pool]) -> None:
    old, new = pools
    root = f"{old.name}/data"
    zfs("create", root)
    zfs("create", f"{root}/a")
    write_random_files(old.mountpoint / "data" / "a", 1, files=2)
    w = wizard
    to_source(qtbot, w, "lab-src", "lab-src")  # one host: the old pool and the new
    to_tree_destination(qtbot, w, root, parent=new.name, name="data")
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
    done.ui.go_back_button.click()
    qtbot.waitUntil(lambda: done.ui.go_live_button.isVisible(), timeout=60_000)
    assert "Back: the copy is out of service" in done.ui.go_live_label.text()
    assert done.ui.sync_again_button.isVisible()
    assert _get(f"{root}/a", "mounted") == "yes" and _get(f"{new.name}/data/a",
                                                          "mounted") == "no"
