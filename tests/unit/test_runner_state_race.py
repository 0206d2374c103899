"""state.json against racing writers: a reader never sees half a file, temporary files never
collide, read-change-write steps lose no update across processes, and the launcher's late pid
never writes a starting state over the runner's own (the race of launch.start)."""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
from dataclasses import replace
from pathlib import Path

from zmigrate.engine.runner import JobState, Status, launch, record, state

ID = "20261127-020000-abcdef"


def _starting() -> Status:
    return Status(id=ID, what="a -> b", request={"argv": []}, started=1.0)


def _count_up(directory: str, n: int) -> None:
    path = Path(directory) / record.STATE
    for _ in range(n):
        state.update(path, lambda s: replace(s, done=s.done + 1))


def test_threads_writing_at_once_leave_a_whole_file_and_no_temporaries(tmp_path: Path) -> None:
    path = tmp_path / record.STATE
    state.write(path, _starting())
    errors: list[BaseException] = []
    stop = threading.Event()

    def writer(k: int) -> None:
        try:
            for i in range(150):
                state.write(path, replace(_starting(), done=k * 1000 + i,
                                          extra={"pad": "x" * (i * 37 % 4000)}))
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    reads = 0

    def reader() -> None:
        nonlocal reads
        while not stop.is_set():
            try:
                json.loads(path.read_text())  # half a file would not parse
                reads += 1
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

    r = threading.Thread(target=reader)
    r.start()
    threads = [threading.Thread(target=writer, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    r.join()
    assert errors == []
    assert reads > 0
    assert state.read(path).done % 1000 == 149
    assert sorted(p.name for p in tmp_path.iterdir()) == [state.LOCK, record.STATE]


def test_processes_changing_the_state_at_once_lose_no_update(tmp_path: Path) -> None:
    state.write(tmp_path / record.STATE, _starting())
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_count_up, args=(str(tmp_path), 200)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert state.read(tmp_path / record.STATE).done == 800


def test_the_launchers_late_pid_never_writes_over_the_runners_state(tmp_path: Path) -> None:
    """The runner (here a thread) writes running, then its end, while the launcher hands in
    the pid it heard: in every interleaving the record ends finished, with a pid."""
    for i in range(150):
        directory = tmp_path / str(i)
        directory.mkdir()
        path = directory / record.STATE
        state.write(path, _starting())
        go = threading.Barrier(2)

        def runner(path: Path = path, go: threading.Barrier = go) -> None:
            go.wait()
            s = replace(state.read(path), state=JobState.RUNNING, pid=os.getpid())
            state.write(path, s)
            state.write(path, replace(s, state=JobState.FINISHED))

        t = threading.Thread(target=runner)
        t.start()
        go.wait()
        launch.take_pid(directory, 4242)
        t.join()
        final = state.read(path)
        assert final.state is JobState.FINISHED, (i, final)
        assert final.pid == os.getpid()


def test_the_launchers_pid_is_taken_by_a_record_still_starting(tmp_path: Path) -> None:
    state.write(tmp_path / record.STATE, _starting())
    assert launch.take_pid(tmp_path, 4242).pid == 4242
    assert state.read(tmp_path / record.STATE).pid == 4242
