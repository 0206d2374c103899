"""With several datasets of a tree in flight (--parallel), the plots follow one at a time."""

from __future__ import annotations

from dataclasses import replace

from every_kind import verdicts
from pytestqt.qtbot import QtBot

from zmigrate.engine.events import DatasetState, Sample, Side
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.readings.samples import SampleStore
from zmigrate.engine.tree import TreeJob, TreeRequest
from zmigrate.engine.verdict.diagnosis import Verdict
from zmigrate.gui.job_bridge import JobBridge


def _sample(t: float, dataset: str) -> Sample:
    return Sample(t, Side.RECEIVE, 1e6, 1e6, int(t * 1e6), 50.0, dataset=dataset)


def _state(dataset: str, state: str) -> DatasetState:
    return DatasetState(dataset, "backup/" + dataset, state, 0, 2, 1)


def test_samples_of_parallel_datasets_never_interleave_in_the_plots() -> None:
    host = LocalHost()
    job = TreeJob(host, host, TreeRequest("tank/t", "backup/t", "s1", parallel=2))
    store = SampleStore()
    bridge = JobBridge(job, store)
    bridge.on_event(_state("tank/t/a", "sending"))
    bridge.on_event(_state("tank/t/b", "sending"))
    for t in range(4):  # both report, turn by turn
        bridge.on_event(_sample(t, "tank/t/a"))
        bridge.on_event(_sample(t + 0.5, "tank/t/b"))
    assert list(store.data(Side.RECEIVE).t) == [0, 1, 2, 3]  # a's only: a came first
    bridge.on_event(_state("tank/t/a", "received"))
    bridge.on_event(_sample(4.5, "tank/t/b"))
    bridge.on_event(_sample(5.5, "tank/t/b"))
    assert list(store.data(Side.RECEIVE).t) == [0, 1, 2, 3, 4.5, 5.5]  # then b's


def test_a_single_datasets_samples_all_go_to_the_plots() -> None:
    host = LocalHost()
    job = TreeJob(host, host, TreeRequest("tank/t", "backup/t", "s1"))
    store = SampleStore()
    bridge = JobBridge(job, store)
    for t in range(3):
        bridge.on_event(Sample(t, Side.SEND, 1.0, 1.0, t, 10.0))
    assert len(store.data(Side.SEND).t) == 3


def test_the_verdict_shown_is_about_the_dataset_the_plots_follow(qtbot: QtBot) -> None:
    """A tiny dataset's "too short" verdict goes once the plots move on to the next one; a
    verdict of a dataset the plots do not follow never shows."""
    host = LocalHost()
    job = TreeJob(host, host, TreeRequest("tank/t", "backup/t", "s1", parallel=2))
    bridge = JobBridge(job, SampleStore())
    shown: list[Verdict | None] = []
    bridge.verdict.connect(shown.append)
    bridge.verdict_cleared.connect(lambda: shown.append(None))
    short, network = verdicts()["too short"], verdicts()["network over tcp"]
    bridge.on_event(_state("tank/t/a", "sending"))
    bridge.on_event(_state("tank/t/b", "sending"))
    bridge.on_event(_sample(0, "tank/t/a"))  # the plots follow a
    bridge.on_event(_sample(0.5, "tank/t/b"))
    bridge.on_event(replace(network, dataset="tank/t/b"))  # not followed: not shown
    bridge.on_event(replace(short, dataset="tank/t/a"))
    assert shown == [replace(short, dataset="tank/t/a")]
    bridge.on_event(_state("tank/t/a", "received"))
    bridge.on_event(_sample(1.5, "tank/t/b"))  # the plots move on to b
    assert shown[-1] is None
    bridge.on_event(replace(network, dataset="tank/t/b"))
    assert shown[-1] == replace(network, dataset="tank/t/b")
    assert replace(network, dataset="tank/t/b").to_json()["dataset"] == "tank/t/b"
    assert "dataset" not in network.to_json()
