"""The Destination page's reads of what an existing dataset without snapshots holds (the
engine's judge: its directory listed by the login, ZFS's figures), each read once, off the
GUI thread, kept by (destination host, dataset): "Overwrite" is offered only once it is known."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject

from zmigrate.engine.destination import Emptiness
from zmigrate.engine.errors import ZmigrateError
from zmigrate.engine.job.preflight import destination_emptiness
from zmigrate.engine.zfs import Dataset

from ..session import Session
from ..threads import run_task

Key = tuple[int, str]
EmptinessFound = Emptiness | ZmigrateError


def needs_judging(session: Session, destination: str) -> Dataset | None:
    """The existing destination dataset whose content a copy would replace (no snapshots, no
    interrupted receive), or None."""
    ds = next((d for d in session.dst_datasets or [] if d.name == destination), None)
    if ds is None or ds.snapshots or ds.resume_token:
        return None
    return ds


class EmptinessReader(QObject):
    """What was found for each dataset, and which ones are being read."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.found: dict[Key, EmptinessFound] = {}
        self.reading: set[Key] = set()

    def clear(self) -> None:
        self.found.clear()

    def judged(self, session: Session, destination: str, done: Callable[[], None]
               ) -> EmptinessFound | None:
        """The judgement of `destination` if it needs one and is known; else None, and it is
        read (once) when it needs one: `done()` on the GUI thread after."""
        target = needs_judging(session, destination)
        if target is None:
            return None
        found = self.found.get((id(session.dst_host), destination))
        if found is None:
            self.read(session, target, done)
        return found

    def read(self, session: Session, target: Dataset, done: Callable[[], None]) -> bool:
        """Judge `target` off the GUI thread; `done()` on the GUI thread once it is known.
        False when it is being read already (or the host is gone)."""
        dst, caps, sets = session.dst_host, session.dst_caps, list(session.dst_datasets or [])
        if dst is None or caps is None:
            return False
        key = (id(dst), target.name)
        if key in self.reading:
            return False
        self.reading.add(key)

        def found(result: EmptinessFound | None) -> None:
            self.reading.discard(key)
            if id(session.dst_host) == key[0]:
                self.found[key] = result if result is not None else ZmigrateError(
                    f"{target.name} changed since the list was read",
                    fix="reload the destination's datasets")
            done()

        def failed(exc: Exception) -> None:
            found(exc if isinstance(exc, ZmigrateError) else ZmigrateError(str(exc)))

        run_task(lambda: destination_emptiness(dst, target, sets, caps.dialect), found, failed)
        return True
