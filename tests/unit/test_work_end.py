"""Work says exactly one end, and it is the last word: what a background thread (the wire
reader) says after a quick refusal is dropped, not printed after the error."""

from __future__ import annotations

import pytest

from zmigrate.engine.errors import ZmigrateError
from zmigrate.engine.events import Event, Failed, Finished, StageChanged, Summary
from zmigrate.engine.work import Work


class _Refused(Work):
    def run(self) -> Summary:
        def refuse() -> Summary:
            self.emit(StageChanged("preflight", "reading"))
            raise ZmigrateError("refused", fix="mend it")
        return self._finish(refuse)


class _Done(Work):
    def run(self) -> Summary:
        return self._finish(lambda: Summary(1, 1.0, 1.0, None, 0, 0, None))


def test_an_event_after_failed_is_dropped() -> None:
    seen: list[Event] = []
    work = _Refused()
    work.subscribe(seen.append)
    with pytest.raises(ZmigrateError):
        work.run()
    work.emit(StageChanged("preflight", "the wire, read late"))
    assert [type(e) for e in seen] == [StageChanged, Failed]
    assert isinstance(seen[-1], Failed) and seen[-1].error.message == "refused"


def test_an_event_after_finished_is_dropped_and_an_observer_may_emit() -> None:
    seen: list[Event] = []
    work = _Done()

    def chatty(event: Event) -> None:
        seen.append(event)
        if isinstance(event, StageChanged) and event.detail == "first":
            work.emit(StageChanged("x", "said from an observer"))  # re-entrant: no deadlock

    work.subscribe(chatty)
    work.emit(StageChanged("x", "first"))
    work.run()
    work.emit(StageChanged("x", "late"))
    assert [getattr(e, "detail", type(e).__name__) for e in seen] == [
        "first", "said from an observer", "Finished"]
    assert isinstance(seen[-1], Finished)
