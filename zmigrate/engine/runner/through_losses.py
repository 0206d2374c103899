"""Following a job on another machine through losses of its runner host: a laptop that sleeps
or changes networks loses the SSH session, not the job. Touch lost, this side says so
(`OutOfTouch`), logs in again on a widening schedule and reads the record from where it
stopped, each event once, asking nothing answered at the first login (a key's passphrase);
a host that never answered the first time is still an error."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator

from ..errors import ZmigrateError
from ..events import OutOfTouch
from ..hosts.remembered import SessionLogins
from .elsewhere import Following
from .record import Recorded
from .remote import Pointer
from .state import Status

# Seconds between tries while out of touch: soon after a blip, then every half minute (a login
# that hangs adds its own connect timeout).
RETRY_AFTER = (2.0, 5.0, 10.0, 20.0, 30.0)


class FollowingThroughLosses:
    """Job `p`'s record, each event once (those after sequence number `after`), across losses
    of the session: each new login reads only what came after the last event given.
    `on_touch` hears when touch is lost (each try that fails) and when it is back. `close`
    (from any thread) ends the following, not the job."""

    def __init__(self, p: Pointer, on_touch: Callable[[OutOfTouch], None],
                 logins: SessionLogins | None = None, clock: Callable[[], float] = time.time,
                 after: int = 0) -> None:
        self.pointer = p
        self.after = after
        self.on_touch = on_touch
        self.clock = clock
        self.status: Status | None = None  # the job's status, once the record has ended
        # One memory for every login: what the first asked (or the window's session did) is
        # not asked again - the laptop that slept may be left alone by then.
        self.logins = logins or SessionLogins()
        self._closed = threading.Event()
        self._lost_at: float | None = None  # when touch was lost, while it is
        self._tries = 0  # logins tried since
        self._current: Following | None = None
        self._lock = threading.Lock()

    def records(self) -> Generator[Recorded, None, None]:
        last = self.after  # the sequence number of the last event given
        reached = False  # a login worked once: the job's host is there
        while not self._closed.is_set():
            following = self._follow_anew(last)
            try:
                for rec in following.records():
                    if rec.seq > last:
                        last = rec.seq
                        yield rec
                self.status = following.status
                return
            except (ZmigrateError, OSError) as exc:
                reached = reached or following.logged_in
                if self._closed.is_set():
                    return
                if not reached and self._lost_at is None:
                    # The first login's refusal is the caller's to show; once in, the job is
                    # there, and a failing try only means the way is not back yet.
                    raise
                self._lost(exc)

    def _lost(self, exc: Exception) -> None:
        """Say touch is lost (or still is, and why), and wait before the next try."""
        lost_at = self._lost_at = self._lost_at if self._lost_at is not None else self.clock()
        wait = RETRY_AFTER[min(self._tries, len(RETRY_AFTER) - 1)]
        self._tries += 1
        # The first notice is the loss itself; later ones say why the login failed.
        reason = "" if self._tries == 1 else (
            exc.message if isinstance(exc, ZmigrateError) else str(exc))
        self.on_touch(OutOfTouch(self.pointer.runner, lost_at, reason, wait))
        self._closed.wait(wait)

    def _back(self) -> None:
        """Logged in again: touch is back (said at once, even where no event is new)."""
        if self._lost_at is not None:
            self.on_touch(OutOfTouch(self.pointer.runner, self._lost_at, back=True))
            self._lost_at, self._tries = None, 0

    def _follow_anew(self, after: int) -> Following:
        with self._lock:
            self._current = Following(self.pointer, self.logins, after, on_login=self._back)
            return self._current

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            current = self._current
        if current is not None:
            current.close()
