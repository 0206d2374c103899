"""Done's Sync again / Final sync / Keep in sync on a runner's job, asked off the GUI thread
(both start a runner): on another machine (engine/runner/elsewhere.again), or here
(jobs/start.again); either way a kept job's own final sync, else a new job of the same tree,
then followed on the Transfer page."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from ...engine.errors import ZmigrateError
from ...engine.runner import elsewhere
from ..session import Session
from ..threads import run_task
from .start import again


class AgainAsker(QObject):
    """One request at a time.

    Signals:
        follow(job, after): show `job` (its pointer on a runner host, or its id here) from
            after sequence number `after`.
        failed(error): the runner (host) refused or did not answer (a ZmigrateError).
    """

    follow = Signal(object, int)
    failed = Signal(object)

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.asking = False

    def ask(self, final: bool, keep_every: str | None = None) -> bool:
        """Ask the followed job's runner (False: a request is on its way already)."""
        if self.asking:
            return False
        self.asking = True
        s = self.session
        p, logins = s.followed_remote, s.logins
        if p is not None:
            run_task(lambda: elsewhere.again(p, final, keep_every, logins), self._answered,
                     self._failed)
        else:
            run_task(lambda: again(s, final, keep_every), self._answered, self._failed)
        return True

    def _answered(self, answer: Any) -> None:
        self.asking = False
        job, after = answer
        self.follow.emit(job, int(after))

    def _failed(self, exc: Exception) -> None:
        self.asking = False
        self.failed.emit(exc if isinstance(exc, ZmigrateError)
                         else ZmigrateError(f"the runner did not answer: {exc}"))
