"""The wizard moves a dataset tree end to end on the real lab, then syncs it again."""

from __future__ import annotations

import pytest
from lab.plugin import Lab, Pool
from lab.util import base_and_clones, snapshot_guid, write_random_files, zfs
from pytestqt.qtbot import QtBot
from wizard_driver import (
    WAIT_TRANSFER,
    start_transfer,
    to_review,
    to_source,
    to_tree_destination,
    wait_review,
)

from zmigrate.engine.tree import SNAPSHOT_PREFIX
from zmigrate.gui import words
from zmigrate.gui.pages.base import PageId
from zmigrate.gui.wizard import MigrationWizard

pytestmark = [pytest.mark.gui, pytest.mark.lab, pytest.mark.timeout(300)]


def make_tree(pool: Pool) -> tuple[str, list[str]]:
    """pool/data with children a, a/deep, b (a user property) and skip (to be excluded);
    older snapshots on data and a only, so no snapshot is shared by all."""
    root = f"{pool.name}/data"
    names = [root, f"{root}/a", f"{root}/a/deep", f"{root}/b", f"{root}/skip"]
    for name in names:
        zfs("create", name)
    for name in names:  # after every create: files in a parent could be in a child's way
        write_random_files(pool.mountpoint / name.split("/", 1)[1], 1, files=2)
    zfs("set", "zmigrate:note=kept", f"{root}/b")
    zfs("snapshot", f"{root}@old")
    zfs("snapshot", f"{root}/a@old")
    return root, names[:4]


def test_tree_end_to_end_then_sync_again(qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab,
                                         pools: tuple[Pool, Pool]) -> None:
    src_pool, dst_pool = pools
    root, picked = make_tree(src_pool)
    w = wizard
    to_source(qtbot, w)
    to_tree_destination(qtbot, w, root, excludes=(f"{root}/skip",), parent=dst_pool.name,
                        name="copy")
    s = w.session
    assert s.tree is not None and [d.name for d in s.tree.picked()] == [
        root, f"{root}/a", f"{root}/b", f"{root}/a/deep"]
    assert s.take_snapshot  # no recent snapshot shared by all: snapshot now is the default
    assert "4 datasets (1 left out), 2 snapshots" in w.source_page.ui.tree_label.text()
    state = w.destination_page.ui.state_label.text()
    assert "4 datasets" in state and "No mountpoint collision" in state, state
    assert w.destination_page.isComplete()
    to_review(qtbot, w)
    commands = w.review_page.ui.commands_edit.toPlainText()
    assert "# snapshot now" in commands and "zfs snapshot" in commands
    assert f"{root}@{SNAPSHOT_PREFIX}" in commands
    for name in picked:
        copy = name.replace(root, f"{dst_pool.name}/copy", 1)
        assert f"# {name} -> {copy}: full" in commands, commands
    assert f"{root}/a/deep -> {dst_pool.name}/copy/a/deep: full" in commands
    assert f"{root}/skip" not in commands
    start_transfer(w)
    assert not w.transfer_page.ui.datasets_view.isHidden()
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    assert s.summary is not None, w.done_page.ui.reason_label.text()
    states = w.transfer_page.datasets.states()
    assert states == dict.fromkeys(picked, "verified"), states
    assert s.tree_plan is not None
    first = s.tree_plan.snapshot
    for name in picked:
        copy = name.replace(root, f"{dst_pool.name}/copy", 1)
        assert snapshot_guid(f"{copy}@{first}") == snapshot_guid(f"{name}@{first}")
    assert snapshot_guid(f"{dst_pool.name}/copy@old") == snapshot_guid(f"{root}@old")
    assert zfs("get", "-H", "-o", "value", "zmigrate:note",
               f"{dst_pool.name}/copy/b").strip() == "kept"
    assert "verified" in w.done_page.ui.datasets_label.text()
    assert w.done_page.ui.sync_again_button.isVisible()
    full_bytes = s.summary.bytes

    # New data in one child: "Sync again" sends only each dataset's delta.
    write_random_files(src_pool.mountpoint / "data" / "a", 1, files=1)
    w.done_page.ui.sync_again_button.click()
    wait_review(qtbot, w)
    assert s.tree_plan is not None
    assert {e.action for e in s.tree_plan.entries} == {"incremental"}
    second_snap = s.tree_plan.snapshot
    assert second_snap != first
    start_transfer(w)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    assert s.summary is not None, w.done_page.ui.reason_label.text()
    # zfs-fuse cannot say what was written: the run measures each increment and leaves the
    # three datasets nothing was written to at the first snapshot (skipped, no new snapshot).
    changed = f"{root}/a"
    assert w.transfer_page.datasets.states() == {
        n: "verified" if n == changed else "skipped" for n in picked}
    assert s.summary.bytes < full_bytes / 2, (s.summary.bytes, full_bytes)
    for name in picked:
        copy = name.replace(root, f"{dst_pool.name}/copy", 1)
        if name == changed:
            assert snapshot_guid(f"{copy}@{second_snap}") == \
                snapshot_guid(f"{name}@{second_snap}")
        else:
            assert f"{name}@{second_snap}" not in zfs(
                "list", "-H", "-t", "snapshot", "-o", "name", "-r", name).split(), name
            assert snapshot_guid(f"{copy}@{first}") == snapshot_guid(f"{name}@{first}")

    # Final sync: Review says how long the source will be read-only (timed on the two runs
    # above, in the history), Done how long it was.
    w.done_page.ui.final_sync_button.click()
    wait_review(qtbot, w)
    told = w.review_page.ui.time_label.text()
    assert told.startswith("Final sync: the source will be read-only for about "), told
    start_transfer(w)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    assert s.summary is not None, w.done_page.ui.reason_label.text()
    assert "s until the copy was checked" in w.done_page.ui.reason_label.text()


def test_mountpoint_collision_is_shown_before_anything_runs(
        qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab, pools: tuple[Pool, Pool]) -> None:
    src_pool, dst_pool = pools
    root, _picked = make_tree(src_pool)
    # A directory in use where the copy would mount (this zfs mounts on receive).
    busy = dst_pool.mountpoint / "copy"
    busy.mkdir()
    (busy / "mine.txt").write_text("the destination host's own files\n")
    w = wizard
    to_source(qtbot, w)
    to_tree_destination(qtbot, w, root, parent=dst_pool.name, name="copy")
    page = w.destination_page
    assert page.tree_plan is None and not page.isComplete()
    text = page.ui.state_label.text()
    assert "mount over" in text and str(busy) in text, text
    assert words.MOUNTED_UNDER in text and "--mount-root" not in text
    # Nothing ran: no dataset on the destination, the directory untouched.
    assert not any(d.name.startswith(f"{dst_pool.name}/copy")
                   for d in w.session.dst_datasets or [])
    assert (busy / "mine.txt").exists()
    # Mounted under a directory of the user's choice: this zfs (no receive -o) still mounts
    # the copy's root under its parent first, so that stays refused, saying why.
    page.ui.mount_root_radio.setChecked(True)
    page.ui.mount_root_edit.setText(str(dst_pool.mountpoint.parent / "elsewhere"))
    page.ui.mount_root_edit.editingFinished.emit()
    qtbot.waitUntil(lambda: not page.checking_tree, timeout=30_000)
    assert not page.isComplete()
    text = page.ui.state_label.text()
    assert "mount over" in text and "root under its parent before it moves" in text, text
    # Another name whose mountpoint is free is the way on.
    page.ui.name_edit.setText("copy2")
    qtbot.waitUntil(lambda: not page.checking_tree, timeout=30_000)
    assert page.isComplete(), page.ui.state_label.text()
    assert "mounted under" in page.ui.state_label.text()



def test_into_the_pool_itself_shows_the_layout_and_lands_in_the_pool_root(
        qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab, pools: tuple[Pool, Pool]) -> None:
    """A pool root as the parent offers "Into the pool itself": the tree's root becomes the
    pool's root dataset, its children the pool's children, and the page says so first."""
    src_pool, dst_pool = pools
    root, picked = make_tree(src_pool)
    w = wizard
    to_source(qtbot, w)
    to_tree_destination(qtbot, w, root, excludes=(f"{root}/skip",), parent=dst_pool.name,
                        name="copy")
    page = w.destination_page
    assert page.ui.into_check.isVisible()
    page.ui.into_check.setChecked(True)
    assert not page.ui.name_edit.isEnabled() and page.destination() == dst_pool.name
    qtbot.waitUntil(lambda: not page.checking_tree and page.tree_plan is not None,
                    timeout=30_000)
    state = page.ui.state_label.text()
    assert f"{root} → {dst_pool.name} (into it: checked empty)" in state, state
    assert f"{root}/a → {dst_pool.name}/a" in state, state
    to_review(qtbot, w)
    start_transfer(w)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    s = w.session
    assert s.summary is not None, w.done_page.ui.reason_label.text()
    assert s.tree_plan is not None
    snap = s.tree_plan.snapshot
    for name in picked:
        copy = dst_pool.name + name[len(root):]
        assert snapshot_guid(f"{copy}@{snap}") == snapshot_guid(f"{name}@{snap}")


def test_review_names_each_clones_origin_and_the_clone_arrives_as_one(
        qtbot: QtBot, wizard: MigrationWizard, lab_env: Lab, pools: tuple[Pool, Pool]) -> None:
    """A tree holding base@gold and a clone of it: Review says, before anything runs, that the
    clone goes from its origin; the copy's clone has the copy's @gold as its origin."""
    src_pool, dst_pool = pools
    root = base_and_clones(src_pool.name, src_pool.mountpoint, "vm", ("linked",), 2)
    w = wizard
    to_source(qtbot, w)
    to_tree_destination(qtbot, w, root, parent=dst_pool.name, name="copy")
    to_review(qtbot, w)
    wait_review(qtbot, w)
    commands = w.review_page.ui.commands_edit.toPlainText()
    assert f"# {root}/linked -> {dst_pool.name}/copy/linked" in commands, commands
    assert f"a clone of {root}/base@gold" in commands, commands
    start_transfer(w)
    qtbot.waitUntil(lambda: w.currentId() == PageId.DONE, timeout=WAIT_TRANSFER)
    assert w.session.summary is not None, w.done_page.ui.reason_label.text()
    origin = zfs("get", "-H", "-o", "value", "origin", f"{dst_pool.name}/copy/linked").strip()
    assert origin == f"{dst_pool.name}/copy/base@gold"
