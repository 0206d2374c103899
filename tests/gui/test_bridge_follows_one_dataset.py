"""With several datasets of a tree in flight (--parallel), the plots follow one at a time."""

from __future__ import annotations

from zmigrate.engine.events import DatasetState, Sample, Side
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.samples import SampleStore
from zmigrate.engine.tree import TreeJob, TreeRequest
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
