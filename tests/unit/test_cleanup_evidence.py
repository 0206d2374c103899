"""job/checks.py: after a failure, a new dataset counts as this run's (and is destroyed as a
partial) only when this run's receive took the stream and was not refused at its start."""

from __future__ import annotations

from zmigrate.engine.job.checks import CREATED_PROOF, Evidence

# What the loser of two jobs to one new name said (lab, zfs-fuse), and OpenZFS's words.
REFUSED = ("lab-dst: the receiver failed (exit 1): must specify -F to overwrite it; mbuffer: "
           "error: outputThread: error writing to <stdout> at offset 0x10000: Broken pipe")
OPENZFS = "cannot receive new filesystem stream: destination 'tank/copy' exists"


def test_only_a_receive_that_took_the_stream_created_the_dataset() -> None:
    assert Evidence(CREATED_PROOF * 10, "the link was lost").created()
    # Refused at the start (the other job's receive holds the name): nothing taken.
    assert not Evidence(0x10000, REFUSED).created()
    # Refused by name, whatever the figures say.
    assert not Evidence(CREATED_PROOF * 10, OPENZFS).created()
    # A run that failed before its receive took anything proves nothing (left to zfs).
    assert not Evidence(0, "ssh: connect to host lab-dst: Connection refused").created()
    assert not Evidence().created()
