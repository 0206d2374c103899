"""One dataset's copy that will likely not fit where it lands, said in its plan before anything
moves (destination/room.py): a full copy as the source stores it, an incremental's delta, and a
thick volume's way out in each face's words."""

from __future__ import annotations

import dataclasses

from test_plan import CAPS, SRC_SNAPS, dataset, snap

from zmigrate.engine import zfs
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.plan import Options, Site, make_plan
from zmigrate.engine.remedies import Caveat, Remedy
from zmigrate.engine.transports import Transport
from zmigrate.engine.units import GiB, MiB
from zmigrate.gui import words

SHORT = "the copy will likely run out of space partway"


def _plan(src_snaps: list[zfs.Snapshot], dst_snaps: list[zfs.Snapshot] | None,
          available: int, kind: str = "filesystem"):  # type: ignore[no-untyped-def]
    src = Site(LocalHost("src"), CAPS, [dataclasses.replace(dataset("tank/home", src_snaps),
                                                            type=kind)])
    dst_sets = [dataclasses.replace(dataset("backup"), available=available)]
    if dst_snaps is not None:
        dst_sets.append(dataclasses.replace(dataset("backup/home", dst_snaps),
                                            available=available))
    return make_plan(src, Site(LocalHost("dst"), CAPS, dst_sets), "tank/home@d", "backup/home",
                     Options(transport=Transport.TCP), connect_address="192.0.2.7",
                     allow_address="192.0.2.5", port=40001)


def _room(plan) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(w) for w in plan.warnings if SHORT in str(w)]


def test_a_full_copy_bigger_than_the_room_there_is_said_with_its_figures() -> None:
    big = [dataclasses.replace(s, referenced=3 * GiB) for s in SRC_SNAPS]
    plan = _plan(big, None, 2 * GiB)
    assert _room(plan) == [
        f"What is copied in full takes about 3 GiB on the source, and backup has 2 GiB "
        f"available: {SHORT}: make room there"]
    assert _room(_plan(big, None, 4 * GiB)) == []  # it fits: nothing said


def test_an_incremental_counts_what_was_written_since_its_base() -> None:
    written = SRC_SNAPS[:1] + [snap("tank/home", s, g, t, used=700 * MiB)
                               for s, g, t in [("b", 12, 20), ("c", 13, 30), ("d", 14, 40)]]
    plan = _plan(written, SRC_SNAPS[:1], GiB)
    assert plan.kind == "incremental"
    assert _room(plan) == [
        "What was written since the copy's snapshots about 2.1 GiB, and backup/home has 1 GiB "
        f"available: {SHORT}: make room there"]
    assert _room(_plan(written, SRC_SNAPS[:1], 3 * GiB)) == []


def test_an_incremental_counts_the_snapshots_written_where_the_host_says_it() -> None:
    """OpenZFS says what each snapshot wrote since the one before (`written`): that counts,
    not what each holds alone (`used`, small where later snapshots share its blocks)."""
    shared = SRC_SNAPS[:1] + [dataclasses.replace(snap("tank/home", s, g, t), written=700 * MiB)
                              for s, g, t in [("b", 12, 20), ("c", 13, 30), ("d", 14, 40)]]
    assert _room(_plan(shared, SRC_SNAPS[:1], GiB)) == [
        "What was written since the copy's snapshots about 2.1 GiB, and backup/home has 1 GiB "
        f"available: {SHORT}: make room there"]
    assert _room(_plan(shared, SRC_SNAPS[:1], 3 * GiB)) == []


def test_a_thick_volume_is_told_how_to_go_thin_in_each_faces_words() -> None:
    big = [dataclasses.replace(s, referenced=3 * GiB) for s in SRC_SNAPS]
    plan = _plan(big, None, 2 * GiB, kind="volume")
    (caveat,) = [w for w in plan.warnings if isinstance(w, Caveat) and SHORT in w.text]
    assert caveat.remedies == (Remedy.THIN_VOLUME,)
    assert str(caveat).endswith(f"{SHORT}: make room there, or receive the volume thin "
                                "(--exclude-property refreservation)")
    shown = words.caveat(caveat)
    assert shown.endswith(f"{SHORT}: make room there, or send from the command line with -x "
                          "refreservation, which receives the volume thin"), shown
