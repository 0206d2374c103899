"""Following a job on its runner host (engine/runner/elsewhere.Following): a follower that
logs in again asks for what came after the last event it gave (`attach --record --after N`);
a zmigrate there too old for `--after` says nothing to it, and the whole record is read
instead, each event then given once by the follower through losses."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from zmigrate.engine.events import StageChanged
from zmigrate.engine.runner import elsewhere, record
from zmigrate.engine.runner.remote import Pointer
from zmigrate.engine.runner.state import JobState, Status

POINTER = Pointer("20261128-120000-00ab00", "nas", "/usr/bin/zmigrate", "tank/a -> b/a", 0.0)
STATUS = json.dumps({"event": "job", **Status(POINTER.id, POINTER.what, {}, 0.0,
                                                JobState.FINISHED).to_json()})
RECORD = [record.encode(seq, StageChanged("sending", f"step {seq}"), 0.0) for seq in (1, 2, 3)]


class Runner:
    """A runner host's answers to `attach --record ID [--after N]`: `knows_after` False is a
    zmigrate there from before `--after` (argparse refuses it: nothing on stdout)."""

    def __init__(self, knows_after: bool) -> None:
        self.knows_after = knows_after
        self.asked: list[tuple[str, ...]] = []

    def stream(self, *args: str) -> Iterator[str]:
        self.asked.append(args)
        if "--after" in args:
            if not self.knows_after:
                return
            after = int(args[args.index("--after") + 1])
            yield from (line for line in RECORD if json.loads(line)["seq"] > after)
        else:
            yield from RECORD
        yield STATUS

    def close(self) -> None:
        pass


@pytest.mark.parametrize("knows_after", [True, False])
def test_a_follower_after_an_event_reads_what_came_after_or_all_from_an_older_runner(
        monkeypatch: pytest.MonkeyPatch, knows_after: bool) -> None:
    runner = Runner(knows_after)
    opened: list[Any] = []

    def open_(*args: Any, **kwargs: Any) -> Runner:
        opened.append(args)
        return runner

    monkeypatch.setattr(elsewhere.RemoteRunner, "open", open_)
    logins: list[bool] = []
    following = elsewhere.Following(POINTER, after=2, on_login=lambda: logins.append(True))
    seqs = [rec.seq for rec in following.records()]
    assert following.status is not None and following.status.state is JobState.FINISHED
    assert logins == [True] and len(opened) == 1
    if knows_after:
        assert seqs == [3]
        assert runner.asked == [("attach", "--record", POINTER.id, "--after", "2")]
    else:
        assert seqs == [1, 2, 3]  # all of it: the follower through losses drops what it gave
        assert runner.asked == [("attach", "--record", POINTER.id, "--after", "2"),
                                ("attach", "--record", POINTER.id)]
