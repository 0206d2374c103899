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
from ..hosts.login import Prompts
from ..hosts.remembered import SecretMemory
from .elsewhere import Following
from .record import Recorded
from .remote import Pointer
from .state import Status

# Seconds between tries while out of touch: soon after a blip, then every half minute (a login
# that hangs adds its own connect timeout).
RETRY_AFTER = (2.0, 5.0, 10.0, 20.0, 30.0)


class FollowingThroughLosses:
    """Job `p`'s record, each event once, across losses of the session; `on_touch` hears when
    touch is lost (each try that fails) and when it is back. `close` (from any thread) ends
    the following, not the job."""

    def __init__(self, p: Pointer, on_touch: Callable[[OutOfTouch], None],
                 prompts: Prompts | None = None, clock: Callable[[], float] = time.time,
                 memory: SecretMemory | None = None) -> None:
        self.pointer = p
        self.on_touch = on_touch
        self.prompts = prompts
        self.clock = clock
        self.status: Status | None = None  # the job's status, once the record has ended
        # What the first login asked (or the window's session did): the laptop that slept
        # may be left alone by then.
        self._secrets = memory if memory is not None else SecretMemory()
        self._closed = threading.Event()
        self._current: Following | None = None
        self._lock = threading.Lock()

    def records(self) -> Generator[Recorded, None, None]:
        last = -1  # the sequence number of the last event given
        lost_at: float | None = None
        tries = 0
        while not self._closed.is_set():
            following = self._follow_anew()
            try:
                for rec in following.records():
                    if lost_at is not None:
                        self.on_touch(OutOfTouch(self.pointer.runner, lost_at, back=True))
                        lost_at, tries = None, 0
                    if rec.seq > last:
                        last = rec.seq
                        yield rec
                self.status = following.status
                return
            except (ZmigrateError, OSError) as exc:
                if self._closed.is_set():
                    return
                if last < 0 and lost_at is None:
                    # The first login's refusal is the caller's to show; after one event the
                    # job is there, and a failing try only means the way is not back yet.
                    raise
                lost_at = lost_at if lost_at is not None else self.clock()
                wait = RETRY_AFTER[min(tries, len(RETRY_AFTER) - 1)]
                tries += 1
                # The first notice is the loss itself; later ones say why the login failed.
                reason = "" if tries == 1 else (
                    exc.message if isinstance(exc, ZmigrateError) else str(exc))
                self.on_touch(OutOfTouch(self.pointer.runner, lost_at, reason, wait))
                self._closed.wait(wait)

    def _follow_anew(self) -> Following:
        with self._lock:
            self._current = Following(self.pointer, self.prompts, self._secrets)
            return self._current

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            current = self._current
        if current is not None:
            current.close()
