"""Whether a tree's first copy fits where it goes (tree/planning/room.py), with the guest's
figures: three thick 100 MiB volumes holding 4 MiB each (a Proxmox VM's disks: `used` 104 MiB,
the reservation) sent into a 256 MiB pool with 119.8 MiB available; zfs receive then left out
two volumes' refreservation ("size is greater than available space") at the end of the run."""

from __future__ import annotations

import dataclasses

from tests.unit.test_plan import dataset
from zmigrate.engine import zfs
from zmigrate.engine.destination.room import Room
from zmigrate.engine.tree.planning.entry import TreeEntry
from zmigrate.engine.tree.planning.room import own_use, room_for

MiB = 1024 * 1024


def _ds(name: str, kind: str, used: float, referenced: float, available: float = 0) -> zfs.Dataset:
    return dataclasses.replace(dataset(name), type=kind, used=int(used * MiB),
                               referenced=int(referenced * MiB), available=int(available * MiB))


SRC = [_ds("srcpool/thick", "filesystem", 3 * 104 + 0.125, 0.125)] + [
    _ds(f"srcpool/thick/vm-10{i}-disk-0", "volume", 104, 4.125) for i in (1, 2, 3)]
DST = [_ds("smallp", "filesystem", 0.2, 0.1, 119.8)]


def _entries(action: str = "full") -> list[TreeEntry]:
    return [TreeEntry(d.name, d.name.replace("srcpool", "smallp"), d.type, d.referenced, action)
            for d in SRC]


def test_thick_volumes_that_will_not_fit_are_said_before_anything_moves() -> None:
    assert own_use(SRC)[SRC[0].name] == MiB // 8  # its children's use is theirs
    room = room_for(_entries(), SRC, DST, "smallp/thick")
    assert room == Room(MiB // 8 + 3 * 104 * MiB, int(119.8 * MiB), "smallp",
                        counted="snapshots and reservations")
    assert room is not None and room.short
    assert room.shortfall() == (
        "What is copied in full takes about 312.1 MiB on the source (snapshots and "
        "reservations included), and smallp has 119.8 MiB available: the copy will likely run "
        "out of space partway")
    assert room.to_json()["short"] is True


def test_thin_volumes_fit_and_an_unknown_destination_says_nothing() -> None:
    thin = room_for(_entries(), SRC, DST, "smallp/thick", left_out=("refreservation",))
    assert thin is not None and not thin.short and thin.shortfall() == ""
    assert thin.needed == MiB // 8 + 3 * (4 * MiB + MiB // 8)
    assert room_for(_entries(), SRC, [], "smallp/thick") is None
    # The nearest existing dataset above the destination counts: here the copy's root itself.
    there = DST + [_ds("smallp/thick", "filesystem", 0.1, 0.1, 500)]
    roomy = room_for(_entries(), SRC, there, "smallp/thick/deeper")
    assert roomy is not None and roomy.where == "smallp/thick" and not roomy.short


def test_a_catch_up_counts_what_was_written_since_its_base() -> None:
    """A final sync that will not fit is said before the source goes read-only: each
    catch-up's delta (`written`, where the host says) against the room where the copy is; a
    delta the host could not say is not guessed."""
    there = [_ds("smallp", "filesystem", 200, 0.1, 119.8), _ds("smallp/thick", "filesystem",
                                                              200, 0.1, 119.8)]
    small = room_for(_entries("incremental"), SRC, there, "smallp/thick")
    assert small is not None and not small.short  # each wrote what it references
    assert small == Room(0, int(119.8 * MiB), "smallp/thick", MiB // 8 + 3 * (4 * MiB + MiB // 8),
                         "snapshots and reservations")
    big = [dataclasses.replace(e, size=50 * MiB) for e in _entries("incremental")]
    room = room_for(big, SRC, there, "smallp/thick")
    assert room is not None and room.short and room.to_json()["changes"] == 200 * MiB
    assert room.shortfall() == (
        "What was written since the copy's snapshots about 200 MiB, and smallp/thick has "
        "119.8 MiB available: the copy will likely run out of space partway")
    both = room_for([dataclasses.replace(big[0], action="full")] + big[1:], SRC, there,
                    "smallp/thick")
    assert both is not None and both.shortfall().startswith(
        "What is copied in full takes about 128 KiB on the source (snapshots and "
        "reservations included) and what was written since the copy's snapshots about 150 MiB")
    unknown = [dataclasses.replace(e, size_known=False) for e in big]
    assert room_for(unknown, SRC, there, "smallp/thick") is None
