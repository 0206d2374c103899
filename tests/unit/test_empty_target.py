"""Into an existing dataset as itself (a new pool's root): only when it is empty, checked."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tests.unit.test_plan import SRC_SNAPS, dataset, sites, snap
from zmigrate.cli import words as cli_words
from zmigrate.engine import event_json
from zmigrate.engine.destination import Emptiness, Evidence, Listing, judge, refusal
from zmigrate.engine.errors import PreflightError, PreflightReason
from zmigrate.engine.events import PlanReady
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.plain_words import contents
from zmigrate.engine.plan import Options, make_plan
from zmigrate.engine.tree.planning.plan import TreeRequest, plan_tree
from zmigrate.gui import words as gui_words

KiB = 1024


# Figures read on the lab (zfs-fuse 0.7): a freshly created dataset references 114688 bytes,
# mounted or not; with one 26-byte notes.txt it references 118784 once unmounted (while it is
# mounted the figure moves only at the next transaction group).
FRESH = 114688
NOTES = 118784
UNMOUNTED = Listing(False)


def listed(*names: str) -> Listing:
    return Listing(True, "/mnt/newtank", tuple(names))


def test_a_fresh_pool_root_is_empty_and_what_a_used_one_holds_is_named() -> None:
    root = dataclasses.replace(dataset("newtank"), referenced=FRESH)
    empty = judge(root, [root], listed(), "zfs-fuse")
    assert empty.empty and empty.mounted and empty.evidence is Evidence.LISTED_EMPTY
    assert empty.why == "no snapshots, no children, its directory empty, 112 KiB referenced"
    files = judge(root, [root], listed("notes.txt", ".ssh", "a", "b", "c", "d"), "zfs-fuse")
    assert not files.empty and files.entry_count == 6 and len(files.entries) == 5
    assert "6 file(s) or folder(s) (notes.txt, .ssh, a, b, c, ...)" in files.why
    child = judge(root, [root, dataset("newtank/old")], listed(), "zfs-fuse")
    assert not child.empty and "1 child dataset(s), e.g. newtank/old" in child.why
    snaps = judge(dataclasses.replace(root, snapshots=[snap("newtank", "x", 5, 1)]), [root],
                  listed(), "zfs-fuse")
    assert not snaps.empty and "1 snapshot(s)" in snaps.why


def test_an_unmounted_dataset_is_empty_only_at_a_fresh_datasets_figure() -> None:
    """Unmounted, nothing can be listed: only ZFS's own figure counts, to the byte."""
    fresh = dataclasses.replace(dataset("newtank"), referenced=FRESH)
    verdict = judge(fresh, [fresh], UNMOUNTED, "zfs-fuse")
    assert verdict.empty and verdict.evidence is Evidence.FRESH and not verdict.mounted
    notes = dataclasses.replace(fresh, referenced=NOTES)
    held = judge(notes, [notes], UNMOUNTED, "zfs-fuse")
    assert not held.empty and held.evidence is Evidence.HOLDS
    assert "116 KiB referenced, 4 KiB more than a fresh dataset (it is not mounted" in held.why
    # The old rule (anything up to 160 KiB unmounted was "empty") let notes.txt through.
    assert not judge(dataclasses.replace(fresh, referenced=150 * KiB), [fresh], UNMOUNTED,
                     "zfs-fuse").empty
    # OpenZFS: no figure proves it (it depends on the sector size; small files can sit in
    # their block pointers), so an unmounted dataset is never judged empty there.
    small = dataclasses.replace(fresh, referenced=24 * KiB)
    unproven = judge(small, [small], UNMOUNTED, "openzfs")
    assert not unproven.empty and unproven.evidence is Evidence.UNPROVEN
    assert "not mounted, so its files cannot be listed" in unproven.why


def test_a_directory_the_login_cannot_list_is_not_empty() -> None:
    """The documented sudoers has no `ls`; a delegated user may not read the directory: a
    failed listing is "cannot tell", never "empty" (whatever the figures say)."""
    fresh = dataclasses.replace(dataset("newtank/data"), referenced=FRESH)
    refused = Listing(True, "/newtank/data", None, "ls: cannot open directory "
                      "'/newtank/data': Permission denied")
    verdict = judge(fresh, [fresh], refused, "zfs-fuse")
    assert not verdict.empty and verdict.evidence is Evidence.UNREADABLE and verdict.mounted
    assert "could not be listed (ls: cannot open directory" in verdict.why
    error = refusal("newtank/data", verdict, "nas", "tank/data")
    assert error.reason is PreflightReason.NOT_EMPTY
    assert "--force to replace the whole content of newtank/data" in (error.fix or "")
    # Listed empty, but referencing far more than the listing shows: data under a mount.
    hidden = dataclasses.replace(fresh, referenced=40 * 1024 * KiB)
    assert not judge(hidden, [hidden], listed(), "zfs-fuse").empty


def test_the_figures_are_worded_for_both_faces() -> None:
    notes = dataclasses.replace(dataset("backup/data"), referenced=NOTES)
    listed_one = judge(notes, [notes], Listing(True, "/backup/data", ("notes.txt",)),
                       "zfs-fuse")
    assert contents(listed_one) == "1 file or folder: notes.txt; 116 KiB referenced"
    unmounted = judge(notes, [notes], UNMOUNTED, "zfs-fuse")
    assert contents(unmounted) == ("116 KiB referenced; its files not listed (not mounted)")
    assert gui_words.overwrite_choice(listed_one) == (
        "Replace the contents of backup/data (1 file or folder: notes.txt; 116 KiB "
        "referenced) with the copy; what it holds is lost")
    assert cli_words.replaced(unmounted).startswith(
        "--force replaces the WHOLE content of backup/data with the copy")
    assert unmounted.to_json()["evidence"] == "holds"


def _emptiness(name: str, *entries: str, mounted: bool = True) -> Emptiness:
    target = dataclasses.replace(dataset(name), referenced=FRESH if not entries else NOTES)
    return judge(target, [target], Listing(True, f"/{name}", entries) if mounted
                 else UNMOUNTED, "zfs-fuse")


def test_an_empty_pool_root_takes_the_copy_as_itself_a_used_one_is_refused() -> None:
    src, dst = sites(None, dst_exists=False)
    p = make_plan(src, dst, "tank/home@d", "backup", Options(), connect_address="x", port=1,
                  emptiness=_emptiness("backup", mounted=False))
    assert p.kind == "full"
    assert "zfs receive -F backup" in p.commands()[0][1]
    assert any("backup is empty" in n and "as backup itself" in n for n in p.warnings)
    assert p.replaces is not None and p.replaces.empty
    assert "whole content" not in p.describe()
    with pytest.raises(PreflightError) as info:
        make_plan(src, dst, "tank/home@d", "backup", Options(), connect_address="x", port=1,
                  emptiness=_emptiness("backup", "a", "b", "c"))
    assert info.value.reason is PreflightReason.POOL_ROOT
    assert ("is a pool root that is not empty: it holds 3 file(s) or folder(s) (a, b, c), "
            "116 KiB referenced") in info.value.message
    assert "receive below it (e.g. backup/home)" in (info.value.fix or "")


def test_force_over_a_dataset_that_holds_files_names_what_is_lost() -> None:
    src, dst = sites(None, dst_exists=False)
    holds = _emptiness("backup", "notes.txt")
    forced = make_plan(src, dst, "tank/home@d", "backup", Options(force=True),
                       connect_address="x", port=1, emptiness=holds)
    assert forced.replaces == holds
    assert ("The whole content of backup is replaced by the copy (--force): it holds 1 "
            "file(s) or folder(s) (notes.txt), 116 KiB referenced.") in forced.describe()
    assert cli_words.replaced(forced.replaces) == (
        "--force replaces the WHOLE content of backup with the copy, without a snapshot of "
        "it; lost: 1 file or folder: notes.txt; 116 KiB referenced")
    # Forced without a look at it (no evidence given): the inventory's figures, never "empty".
    blind = make_plan(src, dst, "tank/home@d", "backup", Options(force=True),
                      connect_address="x", port=1)
    assert blind.replaces is not None and blind.replaces.evidence is Evidence.NOT_READ
    assert "what it holds was not read; 10 MiB referenced" in blind.describe()


def test_a_mounted_empty_target_is_unmounted_first_on_zfs_fuse_only() -> None:
    """zfs-fuse's `receive -F` into a mounted dataset fails now and then ("I/O error"): the
    plan unmounts it first, as its own command, shown; OpenZFS swaps it mounted itself."""
    src, dst = sites(None, dst_exists=False)
    mounted = _emptiness("backup")
    p = make_plan(src, dst, "tank/home@d", "backup", Options(), connect_address="x", port=1,
                  emptiness=mounted)
    assert p.commands()[0] == ("dst", "zfs unmount backup")
    assert "zfs receive -F backup" in p.commands()[1][1]
    openzfs = dataclasses.replace(dst.caps, dialect="openzfs")
    src_o, dst_o = sites(None, dst_exists=False, caps=openzfs)
    p = make_plan(src_o, dst_o, "tank/home@d", "backup", Options(), connect_address="x",
                  port=1, emptiness=mounted)
    assert p.unmount is None and "zfs receive -F backup" in p.commands()[0][1]
    forced = make_plan(src, dst, "tank/home@d", "backup", Options(force=True),
                       connect_address="x", port=1, emptiness=_emptiness("backup", "x"))
    assert forced.commands()[0] == ("dst", "zfs unmount backup")


def test_a_tree_into_an_existing_empty_root_receives_its_root_as_that_dataset() -> None:
    host = LocalHost()
    src = [dataset("tank/home", SRC_SNAPS),
           dataset("tank/home/a", [snap("tank/home/a", "d", 40, 3)])]
    dst = [dataset("newtank")]
    plan = plan_tree(host, host, TreeRequest("tank/home", "newtank", "d"), src, dst,
                     snapshot="d", unmounted=True)
    root, child = plan.entries
    assert (root.destination, root.action, root.into) == ("newtank", "full", True)
    assert "into the existing newtank itself" in root.reason
    assert (child.destination, child.action, child.into) == ("newtank/a", "full", False)
    assert plan.to_json()["datasets"][0]["into"] is True


def test_a_plan_that_replaces_a_dataset_travels_in_the_event_record() -> None:
    """The history's event record carries what a forced plan replaces, exactly."""
    src, dst = sites(None, dst_exists=False)
    forced = make_plan(src, dst, "tank/home@d", "backup", Options(force=True),
                       connect_address="x", port=1, emptiness=_emptiness("backup", "notes.txt"))
    event = PlanReady(forced)
    back = event_json.from_json(json.loads(json.dumps(event_json.to_json(event))))
    assert isinstance(back, PlanReady) and back.plan.replaces == forced.replaces
    assert forced.to_json()["replaces"]["entries"] == ["notes.txt"]


def test_a_volume_is_never_judged_empty_and_its_refusal_offers_no_children_or_mount() -> None:
    """A volume (a VM's disk, on the OpenZFS guest: a fresh one references 56 KiB) has no files
    to list: no figure proves it unused. Its refusal names it a volume and offers neither
    receiving below it (a volume has no children) nor mounting it."""
    fresh = dataclasses.replace(dataset("backup/vm-100-disk-0"), type="volume",
                                referenced=56 * KiB)
    for dialect in ("openzfs", "zfs-fuse"):
        verdict = judge(fresh, [fresh], UNMOUNTED, dialect)
        assert not verdict.empty and verdict.evidence is Evidence.UNPROVEN and verdict.volume
    assert verdict.why == ("it is a volume (a block device), whose content cannot be listed, "
                           "and 56 KiB referenced does not prove it unused")
    assert contents(verdict) == "56 KiB referenced; a volume: its blocks cannot be listed"
    error = refusal("backup/vm-100-disk-0", verdict, "nas", "tank/vm-100-disk-0")
    assert error.fix == ("pick another name, or pass --force to replace the whole content of "
                         "backup/vm-100-disk-0 with the copy (what it holds is lost)")
    assert error.figures["volume"] == "yes" and not error.figures["unmounted"]
    assert gui_words.refusal_fix(error) == (
        "Pick another name, or allow replacing the whole content of backup/vm-100-disk-0 "
        "below (what it holds is lost)")
    assert verdict.to_json()["volume"] is True
    # A file system's refusal still offers both (and no stray space before a comma).
    fs = judge(dataclasses.replace(fresh, type="filesystem"), [fresh], UNMOUNTED, "openzfs")
    fix = refusal("backup/data", fs, "nas", "tank/data").fix or ""
    assert fix.startswith("receive below it (e.g. backup/data/data), pick another name, "
                          "empty it first, mount it (zfs mount backup/data)")
