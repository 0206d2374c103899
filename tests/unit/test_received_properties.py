"""zfs receive's "cannot receive NAME property" lines, as the OpenZFS 2.3.2 guest printed them
(a -R stream into a `compatibility=grub2` pool, and a delegated login's -o)."""

from __future__ import annotations

import pytest

from zmigrate.engine.destination.received_properties import RefusedLines, Unset, reserved_fix
from zmigrate.engine.errors import ZmigrateError
from zmigrate.engine.events import LogLine, Sample, Side
from zmigrate.engine.job.step.stream_watch import SideState, StreamWatch
from zmigrate.engine.readings.mbuffer import status_and_rest
from zmigrate.engine.tree.running.verification import TreeCheck

GRUB = ("cannot receive compression property on gq/c: pool and or dataset must be upgraded "
        "to set this property or value")
# The receiving mbuffer's last status line, which ends with no line end (the guest's stderr).
STATUS = "in @ 3393 kiB/s, out @ 2262 kiB/s, 2048 kiB total, buffer   6% full"
DELEGATED = "cannot receive user:x property on dstpool/dq/o_u: permission denied"


def test_each_refused_property_is_collected_with_zfs_reason() -> None:
    lines = RefusedLines()
    # mbuffer's last status line has no line end: zfs's words then follow it on one line.
    for text in (STATUS + GRUB, DELEGATED, "cannot receive new filesystem stream: pool must be "
                 "upgraded to receive this stream.", "summary: 3.1 MiByte in 1.2sec"):
        lines(LogLine("dst", Side.RECEIVE, text + "\n"))
    lines("not a log line")
    assert lines.said() == {
        ("compression", "gq/c"): "pool and or dataset must be upgraded to set this property "
                                 "or value",
        ("user:x", "dstpool/dq/o_u"): "permission denied"}


def test_an_unset_property_is_worded_with_its_value_and_reason() -> None:
    assert Unset("compression", "gq/o", "zstd", "permission denied").words() == \
        "compression=zstd on gq/o (permission denied)"
    assert Unset("compression", "gq/c", None, "").words() == "compression on gq/c"


def test_zfs_words_after_mbuffer_last_status_are_a_line_of_their_own() -> None:
    assert status_and_rest(STATUS + GRUB) == (STATUS, GRUB)
    assert status_and_rest(STATUS) is None and status_and_rest(GRUB) is None
    events: list[object] = []
    receive = SideState(Side.RECEIVE, "dst")
    watch = StreamWatch(SideState(Side.SEND, "src"), receive, events.append, 0.0, False)
    watch.output(receive, f"{STATUS}{GRUB}\n".encode())
    assert [type(e) for e in events] == [Sample, LogLine], events
    assert isinstance(events[1], LogLine) and events[1].text == GRUB
    assert receive.last is not None and receive.last.total == 2048 * 1024



RESERVED = ("cannot receive refreservation property on smallp/t/vm-101-disk-0: size is greater "
            "than available space")


def test_a_reservation_with_no_room_gets_the_fix_that_works_in_a_tree_and_alone() -> None:
    """The guest's words for a thick volume into a pool without room for its reservation."""
    lines = RefusedLines()
    lines(LogLine("openzfs-dst", Side.RECEIVE, RESERVED))
    said = lines.said()
    assert said == {("refreservation", "smallp/t/vm-101-disk-0"):
                    "size is greater than available space"}
    fix = reserved_fix(said)
    assert fix is not None and "(-x refreservation: volumes then arrive thin" in fix
    assert reserved_fix({("compression", "gq/c"): GRUB.split(": ", 1)[1]}) is None
    check = TreeCheck(problems={"smallp/t/vm-101-disk-0": "properties differ: refreservation"},
                      differ={"smallp/t/vm-101-disk-0": ["refreservation"]})
    with pytest.raises(ZmigrateError) as info:
        check.raise_problems("openzfs-dst", said)
    assert "refreservation (zfs receive said refreservation: size is greater than available " \
        "space)" in str(info.value)
    assert info.value.fix == fix
    # A property zfs gave no reason for: set it, or leave it out; not "run it again".
    with pytest.raises(ZmigrateError) as info:
        check.raise_problems("openzfs-dst", {})
    assert info.value.fix is not None and "-x NAME" in info.value.fix
    # A snapshot that did not arrive: running again sends it.
    missing = TreeCheck(problems={"bk/a": "@s1 is missing or differs"})
    with pytest.raises(ZmigrateError) as info:
        missing.raise_problems("openzfs-dst", said)
    assert info.value.fix == "run the same command again to send what is missing"
    # Both at once: each gets its own way out.
    both = TreeCheck(problems={**missing.problems, **check.problems}, differ=check.differ)
    with pytest.raises(ZmigrateError) as info:
        both.raise_problems("openzfs-dst", said)
    assert info.value.fix == f"run the same command again to send what is missing; {fix}"
