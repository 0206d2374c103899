"""The Destination page's reads of interrupted receives: each token decoded once, off the GUI
thread, kept by (destination host, dataset, token)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject

from zmigrate.engine.errors import ZmigrateError
from zmigrate.engine.hosts import Host
from zmigrate.engine.job import partial_receive
from zmigrate.engine.zfs import Capabilities, ResumeInfo

from ..session import Session
from ..threads import run_task

Key = tuple[int, str, str]
PartialFound = ResumeInfo | ZmigrateError


def read_partial(src: Host, dst: Host, destination: str, src_caps: Capabilities | None,
                 dst_caps: Capabilities | None) -> PartialFound:
    """The decoded resume token of `destination` (remote: call it off the GUI thread)."""
    try:
        info = partial_receive(src, dst, destination, src_caps=src_caps, dst_caps=dst_caps)
    except ZmigrateError as exc:
        return exc
    if info is None:
        return ZmigrateError("the partial receive is gone since the list was read",
                             fix="reload the destination's datasets")
    return info


class PartialReader(QObject):
    """What was found for each partial receive, and which ones are being read."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.found: dict[Key, PartialFound] = {}
        self.reading: set[Key] = set()

    def clear(self) -> None:
        self.found.clear()

    def read(self, session: Session, key: Key, done: Callable[[], None]) -> bool:
        """Decode `key`'s token off the GUI thread; `done()` on the GUI thread once it is
        known. False when it is being read already (or the hosts are gone)."""
        if key in self.reading or session.src_host is None or session.dst_host is None:
            return False
        self.reading.add(key)
        s = session
        src, dst, src_caps, dst_caps = s.src_host, s.dst_host, s.src_caps, s.dst_caps
        assert src is not None and dst is not None

        def found(result: PartialFound) -> None:
            self.reading.discard(key)
            if id(session.dst_host) == key[0]:
                self.found[key] = result
            done()

        def failed(exc: Exception) -> None:
            found(exc if isinstance(exc, ZmigrateError) else ZmigrateError(str(exc)))

        run_task(lambda: read_partial(src, dst, key[1], src_caps, dst_caps), found, failed)
        return True
