"""The Transfer and Done pages fed with a real recorded run (no lab): plots, labels, banners."""

from __future__ import annotations

from pathlib import Path

import pytest
from every_kind import network, replay
from pytestqt.qtbot import QtBot
from replay_trace import load_trace

from zmigrate.engine.errors import TransferError
from zmigrate.engine.events import (
    DatasetState,
    EndCpu,
    Failed,
    Finished,
    LogLine,
    Resent,
    Sample,
    Side,
    StageStarted,
    Stalled,
)
from zmigrate.engine.transports import Transport
from zmigrate.engine.verdict.diagnosis import Bottleneck
from zmigrate.gui.job_bridge import JobBridge
from zmigrate.gui.pages.done_page import DonePage
from zmigrate.gui.pages.transfer_page import TransferPage
from zmigrate.gui.session import Session

pytestmark = pytest.mark.gui


def test_real_trace_fills_plots_progress_and_done_page(
        qtbot: QtBot, pages: tuple[Session, TransferPage, DonePage, JobBridge],
        tmp_path: Path) -> None:
    session, transfer, done, bridge = pages
    events = load_trace("trace-tcp-60M.json")
    with qtbot.waitSignal(transfer.ended, timeout=5000):
        for event in events:
            bridge.on_event(event)
    samples = [e for e in events if isinstance(e, Sample)]
    sends = [s for s in samples if s.side is Side.SEND]
    xs, ys = transfer.plots.rates.send.getData()
    assert len(xs) == len(sends)
    assert ys[-1] == pytest.approx(sends[-1].in_rate / 2**20)  # plotted in MiB/s
    _, fill = transfer.plots.fill.receiver.getData()
    assert max(fill) == max(s.fill for s in samples if s.side is Side.RECEIVE)
    assert "60.2 MiB of 60.2 MiB written (100%)" in transfer.ui.progress_label.text()
    assert transfer.isComplete()
    assert not transfer.ui.stop_button.isEnabled()
    assert transfer.ui.verdict_frame.isHidden()

    summary = next(e for e in events if isinstance(e, Finished)).summary
    assert session.summary == summary
    done.initializePage()
    assert "verified" in done.ui.result_label.text()
    assert done.ui.bytes_value.text().startswith("60.2 MiB")
    assert "matches the source" in done.ui.check_value.text()
    assert done.export_csv(tmp_path / "samples.csv")
    rows = (tmp_path / "samples.csv").read_text().splitlines()
    assert len(rows) == len(samples) + 1
    assert done.save_png(tmp_path / "plot.png")


def test_verdict_banner_appears_on_both_pages(
        pages: tuple[Session, TransferPage, DonePage, JobBridge]) -> None:
    session, transfer, done, bridge = pages
    # The kinds the bridge leaves to other faces pass without a trace (the vocabulary is closed:
    # mypy, not the bridge, refuses what is no event).
    bridge.on_event(Stalled(3.0, "destination", "lab-dst", 30.0, {"state": "disk"}))
    bridge.on_event(StageStarted("network", "the network", 5.0))
    assert transfer.ui.verdict_frame.isHidden()
    verdict = replay(network(), Transport.SSH)  # the engine's, on a sender-full trace
    assert verdict.kind is Bottleneck.NETWORK
    bridge.on_event(verdict)
    assert not transfer.ui.verdict_frame.isHidden()
    banner = transfer.ui.verdict_label.text()
    assert "SSH carries only 40 MiB/s" in banner
    assert f"(confidence {verdict.confidence:.0%})" in banner
    assert "<li>Choose Direct TCP instead of Through SSH on the Transport and tuning page" in banner
    assert "--" not in banner
    bridge.on_event(Failed(TransferError("the receiver failed (exit 1): out of space",
                                         host="lab-dst", fix="free space on the destination")))
    done.initializePage()
    assert not done.ui.verdict_frame.isHidden()
    assert "failed" in done.ui.result_label.text()
    reason = done.ui.reason_label.text()
    # The engine's words for every face, as the wizard's sentences start: a capital.
    assert "out of space" in reason and "Fix: Free space on the destination" in reason
    assert "Traceback" not in reason


def test_log_is_collapsible_and_names_each_end(
        qtbot: QtBot, pages: tuple[Session, TransferPage, DonePage, JobBridge]) -> None:
    _, transfer, _, bridge = pages
    bridge.on_event(LogLine("lab-dst", Side.RECEIVE, "cannot receive: out of space"))
    assert transfer.ui.log_edit.isHidden()
    transfer.ui.log_toggle.click()
    assert transfer.ui.log_edit.isVisible()
    assert transfer.ui.log_edit.toPlainText() == "[lab-dst receiver] cannot receive: out of space"


def test_a_transfer_shorter_than_a_status_line_ends_with_rates_points_and_a_verdict(
        qtbot: QtBot, pages: tuple[Session, TransferPage, DonePage, JobBridge]) -> None:
    """What the engine emits for a ~1 s run: one point per side from each mbuffer's summary,
    the final Progress at the average rate, and the real Diagnoser's final verdict."""
    from zmigrate.engine.events import Progress, Summary
    from zmigrate.engine.findings import FindingKind
    from zmigrate.engine.verdict.diagnosis import Diagnoser

    session, transfer, done, bridge = pages
    rate, total = 40 * 2**20, 4 * 2**20
    events: list[object] = [Sample(0.4, Side.SEND, rate, rate, total, 0.0),
                            Sample(0.5, Side.RECEIVE, rate, rate, total, 0.0),
                            Progress(0.6, total, total, rate, 0.0)]
    diagnoser = Diagnoser(events.append)
    for e in list(events):
        diagnoser(e)
    verdict = diagnoser.finish()
    assert verdict.finding.kind is FindingKind.TOO_SHORT
    events.append(Finished(Summary(total, 0.1, rate, 0, 1, 1, None,
                                   extra={"verdict": verdict.to_json()})))
    with qtbot.waitSignal(transfer.ended, timeout=5000):
        for event in events:
            bridge.on_event(event)
    for curve in (transfer.plots.rates.send, transfer.plots.rates.receive):
        xs, _ = curve.getData()
        assert xs is not None and len(xs) == 1
    assert "40 MiB/s on average" in transfer.ui.progress_label.text()
    done.initializePage()
    assert "verified" in done.ui.result_label.text()
    assert done.ui.bytes_value.text().startswith("4")
    banner = done.ui.verdict_label.text()
    assert "The transfer was too short to judge" in banner
    assert "Not enough data" not in banner and "confidence" not in banner


def test_the_ways_figures_follow_the_dataset_the_plots_follow(
        qtbot: QtBot, pages: tuple[Session, TransferPage, DonePage, JobBridge]) -> None:
    """Each end's last CPU reading and the last resent share, sender first; a tree's other
    datasets' readings are not this line's, and a new dataset followed starts it afresh."""
    _, transfer, _, bridge = pages
    label = transfer.ui.ends_label
    assert label.isHidden()
    bridge.on_event(Sample(1.0, Side.SEND, 1e6, 1e6, 1e6, 50.0, dataset="tank/a"))  # followed
    bridge.on_event(EndCpu(2.0, Side.RECEIVE, "nas", "socat", 0.9, 0.0, 1.0, dataset="tank/a"))
    bridge.on_event(EndCpu(2.0, Side.SEND, "pve", "socat", 0.3, 0.0, 1.0, dataset="tank/a"))
    bridge.on_event(Resent(2.0, "pve", "Linux", 50_000, 25, 1.0, dataset="tank/a"))
    bridge.on_event(EndCpu(2.5, Side.SEND, "pve", "socat", 0.99, 0.0, 1.0, dataset="tank/b"))
    want = ("pve sent 0.1% of its TCP segments again  ·  socat on pve: 30% of a CPU  ·  "
            "socat on nas: 90% of a CPU")
    qtbot.waitUntil(lambda: label.text() == want and label.isVisible(), timeout=3000)
    bridge.on_event(EndCpu(3.0, Side.RECEIVE, "nas", "socat", 0.5, 0.2, 1.0, dataset="tank/a"))
    qtbot.waitUntil(lambda: "socat on nas: 50% of a CPU, 20% waiting for one" in label.text(),
                    timeout=3000)
    bridge.on_event(DatasetState("tank/a", "backup/a", "verified", 0, 2, 1_000_000))
    bridge.on_event(Sample(4.0, Side.SEND, 1e6, 1e6, 2e6, 50.0, dataset="tank/b"))
    qtbot.waitUntil(label.isHidden, timeout=3000)  # another dataset: nothing of it read yet
