"""Why an end failed, from zfs receive's last words (job/step/why_failed.py), as the OpenZFS 2.3.2
guest printed them."""

from __future__ import annotations

from zmigrate.engine.events import Side
from zmigrate.engine.hosts.local import LocalHost
from zmigrate.engine.job.step.stream_watch import SideState
from zmigrate.engine.job.step.why_failed import end_error


def test_a_stream_the_pool_must_be_upgraded_for_gets_a_fix_for_plain_and_raw() -> None:
    """zfs receive's words on the guest for a zstd stream into a pool without zstd (sent as
    stored, or raw), where the pools' features were not read before: the fix names both ways."""
    state = SideState(Side.RECEIVE, "openzfs-dst")
    state.tail.append("cannot receive new filesystem stream: pool must be upgraded to receive "
                      "this stream.")
    err = end_error(state, "the receiver failed", LocalHost("openzfs-dst"))
    assert "pool must be upgraded" in str(err)
    assert err.fix is not None
    assert "--no-compressed" in err.fix and "--decrypt" in err.fix and "zpool upgrade" in err.fix
