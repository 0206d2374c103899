"""Destination's tree state line and Review's per-dataset commands, from a tree plan."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from zmigrate.engine.destination.room import Room
from zmigrate.engine.errors import PreflightError, ZmigrateError
from zmigrate.engine.events import DatasetState, Summary
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.tree import FAILED, VERIFIED, TreeEntry, TreeJob, TreePlan, TreeRequest
from zmigrate.engine.units import MiB
from zmigrate.engine.zfs import Dataset
from zmigrate.gui.models.tree_pick import TreePick
from zmigrate.gui.models.tree_table_model import TreeTableModel
from zmigrate.gui.pages.destination_page import tree_state
from zmigrate.gui.pages.done_page import DonePage
from zmigrate.gui.pages.review_page import plan_with_commands
from zmigrate.gui.session import Session
from zmigrate.gui.settings import Settings
from zmigrate.gui.wizard import MigrationWizard

pytestmark = pytest.mark.gui


def plan(snapshot_command: str | None = None) -> TreePlan:
    entries = (TreeEntry("tank/a", "backup/a", "filesystem", 10, "full"),
               TreeEntry("tank/a/b", "backup/a/b", "filesystem", 5, "incremental", "from @x"),
               TreeEntry("tank/a/c", "backup/a/c", "volume", 5, "skip", "@s already there"))
    return TreePlan("src", "dst", "tank/a", "backup/a", "s", snapshot_command, None, entries,
                    ("backup/a/gone",), (), "The copy is received unmounted (zfs receive -u)")


class FakePlan:
    def __init__(self, name: str) -> None:
        self.name = name

    def commands(self) -> list[tuple[str, str]]:
        return [("dst", f"zfs receive {self.name}"), ("src", f"zfs send {self.name}")]


class FakeJob:
    request = TreeRequest("tank/a", "backup/a")  # not a final sync (final_sync_window reads it)

    def __init__(self, tree: TreePlan) -> None:
        self.tree = tree

    def prepare(self) -> TreePlan:
        return self.tree

    def dataset_plan(self, entry: TreeEntry) -> Any:
        if entry.source == "tank/a/b":
            raise PreflightError("its parent is not there yet")
        return FakePlan(entry.destination)


def test_tree_state_line_counts_actions_mount_and_vanished() -> None:
    state = tree_state(plan())
    assert state.kind == "incremental"
    assert "<b>3 datasets</b>" in state.text
    assert "1 in full" in state.text and "1 as a catch-up" in state.text
    assert "1 already complete" in state.text
    assert "received unmounted" in state.text and "No mountpoint collision" in state.text
    assert "backup/a/gone" in state.text and "never destroyed" in state.text


def test_review_lists_each_datasets_exact_commands() -> None:
    tree, rows, window = plan_with_commands(FakeJob(plan()))  # type: ignore[arg-type]
    assert window is None  # not a final sync
    assert tree.root == "tank/a"
    by = {e.source: c for e, c in rows}
    assert by["tank/a"] == ["# on dst\nzfs receive backup/a", "# on src\nzfs send backup/a"]
    assert by["tank/a/b"] == ["# decided when it runs: its parent is not there yet"]
    assert by["tank/a/c"] == []


def test_review_marks_commands_planned_ahead_of_the_snapshot() -> None:
    """The snapshot is still to be taken: the commands are shown, planned as if it existed
    (as --dry-run prints them, from the same engine listing)."""
    _, rows, _ = plan_with_commands(FakeJob(plan("zfs snapshot -r tank/a@s")))  # type: ignore[arg-type]
    by = {e.source: c for e, c in rows}
    assert by["tank/a"] == ["# planned as if @s existed (it is taken first)",
                            "# on dst\nzfs receive backup/a", "# on src\nzfs send backup/a"]
    assert by["tank/a/c"] == []


def test_review_names_the_stream_a_carried_dataset_arrives_in() -> None:
    entries = (TreeEntry("tank/a", "backup/a", "filesystem", 10, "full", replicate=True),
               TreeEntry("tank/a/x", "backup/a/x", "filesystem", 5, "full",
                         carried_by="tank/a"))
    tree = TreePlan("src", "dst", "tank/a", "backup/a", "s", None, None, entries, (), (),
                    "The copy is received unmounted (zfs receive -u)")
    _, rows, _ = plan_with_commands(FakeJob(tree))  # type: ignore[arg-type]
    by = {e.source: c for e, c in rows}
    assert by["tank/a"] == ["# on dst\nzfs receive backup/a", "# on src\nzfs send backup/a"]
    assert by["tank/a/x"] == ["# arrives in the raw replication stream of tank/a"]
    assert "zfs send -R -w" in tree.describe() and "1 descendant(s)" in tree.describe()


def test_done_names_the_copies_that_became_encryption_roots_with_the_fix(
        qtbot: QtBot, settings: Settings) -> None:
    host = LocalHost()
    session = Session()
    session.tree = TreePick.of([Dataset("tank/a", "filesystem", 1, 1, 1, 1, 0)], "tank/a")
    session.job = TreeJob(host, host, TreeRequest("tank/a", "backup/a", "s"))
    session.plan = plan()
    session.summary = Summary(10, 1.0, 10.0, None, 5, 5, None, ("s",), extra={
        "datasets": {"tank/a": "verified"},
        "own_encryption_roots": {"backup/a/later": "backup/a"}})
    done = DonePage(session, settings)
    qtbot.addWidget(done)
    done.initializePage()
    text = done.ui.reason_label.text()
    assert "zfs change-key -i backup/a/later" in text, text
    assert "zfs load-key -r" in text


def test_done_after_a_tree_failed_part_way_says_what_arrived_and_hides_empty_facts(
        qtbot: QtBot, settings: Settings) -> None:
    """Five datasets verified, the sixth failed: the facts said "—" for everything (even
    "Sent"), five rows of dashes squeezing the plots."""
    host = LocalHost()
    session = Session()
    session.tree = TreePick.of([Dataset("tank/a", "filesystem", 1, 1, 1, 1, 0)], "tank/a")
    session.job = TreeJob(host, host, TreeRequest("tank/a", "backup/a", "s"))
    session.plan = plan()
    session.error = ZmigrateError("the source could not reach the listener", host="src")
    done = DonePage(session, settings)
    qtbot.addWidget(done)
    model = TreeTableModel()
    for i, (name, state) in enumerate((("tank/a", VERIFIED), ("tank/a/b", VERIFIED),
                                       ("tank/a/c", FAILED))):
        model.apply(DatasetState(name, name.replace("tank", "backup"), state, i, 3, MiB,
                                 bytes=3 * MiB if state == VERIFIED else 0))
    done.lend_datasets(model)
    done.show()
    done.initializePage()
    ui = done.ui
    assert ui.bytes_value.text() == "6 MiB in 2 of 3 datasets"
    assert ui.bytes_value.isVisible()
    assert not ui.duration_value.isVisible() and not ui.rate_value.isVisible()
    assert not ui.check_caption.isVisible()
    assert "✗ failed" in ui.datasets_label.text()
    # A later success shows every fact again.
    session.error = None
    session.summary = Summary(10, 1.0, 10.0, None, 5, 5, None, ("s",))
    done.initializePage()
    assert ui.duration_value.isVisible() and ui.rate_value.isVisible()


def test_review_says_first_where_a_trees_copy_will_not_fit(
        qtbot: QtBot, wizard: MigrationWizard) -> None:
    """The guest's figures (tests/unit/test_tree_room.py): 312 MiB of thick volumes into a pool
    with 119.8 MiB available. Review's notes say it before anything moves."""
    host = LocalHost()
    job = TreeJob(host, host, TreeRequest("tank/a", "backup/a", "s"))
    short = dataclasses.replace(plan(), room=Room(312 * 2**20, int(119.8 * 2**20), "backup"))
    review = wizard.review_page
    review._on_tree_plan(review._generation, job, short, [], None)
    notes = review.ui.warnings_label.text()
    assert "backup has 119.8 MiB available: the copy will likely run out of space" in notes
    assert "untick datasets on the Source page" in notes and "-x refreservation" in notes
    review._clear()  # as a new preparation starts
    review._on_tree_plan(review._generation, job, plan(), [], None)  # room enough, or unknown
    assert "run out of space" not in review.ui.warnings_label.text()
