"""Done's Sync again / Final sync / Keep in sync on a job whose runner is another machine:
asked there off the GUI thread (engine/runner/elsewhere.again: a kept job's own final sync,
else a new job of the same tree on the same runner host), then followed on the Transfer page."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from ...engine.errors import ZmigrateError
from ...engine.hosts.remembered import SessionLogins
from ...engine.runner import elsewhere
from ...engine.runner.remote import Pointer
from ..threads import run_task


class RemoteAgain(QObject):
    """One request at a time.

    Signals:
        follow(pointer, after): show job `pointer` from after sequence number `after`.
        failed(error): the runner host refused or did not answer (a ZmigrateError).
    """

    follow = Signal(object, int)
    failed = Signal(object)

    def __init__(self, logins: SessionLogins, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.logins = logins
        self.asking: Pointer | None = None

    def ask(self, p: Pointer, final: bool, keep_every: str | None = None) -> bool:
        """Ask `p`'s runner host (False: a request is on its way already)."""
        if self.asking is not None:
            return False
        self.asking = p
        logins = self.logins
        run_task(lambda: elsewhere.again(p, final, keep_every, logins), self._answered,
                 self._failed)
        return True

    def _answered(self, answer: Any) -> None:
        self.asking = None
        pointer, after = answer
        self.follow.emit(pointer, int(after))

    def _failed(self, exc: Exception) -> None:
        self.asking = None
        self.failed.emit(exc if isinstance(exc, ZmigrateError)
                         else ZmigrateError(f"the runner host did not answer: {exc}"))
