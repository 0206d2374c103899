"""The wire in the wizard: the Transfer page's rate plot carries the path's ceiling as a line and
its progress says the share (the wire read from real captures: tests/wire_samples.py)."""

from __future__ import annotations

import pytest
from wire_samples import shaped

from zmigrate.engine.events import Progress
from zmigrate.engine.units import MiB
from zmigrate.gui.job_bridge import JobBridge
from zmigrate.gui.pages.done_page import DonePage
from zmigrate.gui.pages.transfer_page import TransferPage
from zmigrate.gui.session import Session

pytestmark = pytest.mark.gui


def test_the_ceiling_is_drawn_and_the_share_said(
        pages: tuple[Session, TransferPage, DonePage, JobBridge]) -> None:
    _session, transfer, _done, bridge = pages
    line = transfer.plots.rates.ceiling
    assert not line.isVisible()
    wire = shaped()
    assert wire.ceiling is not None
    bridge.on_event(wire)
    assert line.isVisible()
    assert line.value() == pytest.approx(wire.ceiling.rate / MiB)
    assert "ceiling: 46 MiB/s, the 400 Mb/s shaping on lab-src" in line.label.format
    rate = 0.95 * wire.ceiling.rate
    bridge.on_event(Progress(10.0, int(10 * rate), 4 * int(10 * rate), rate, 30.0))
    transfer._show_progress()
    text = transfer.ui.progress_label.text()
    assert "43.7 MiB/s, 95% of the 400 Mb/s shaping on lab-src: the wire is the limit" in text
    # The plot's range holds the line even while the rates run below it.
    _low, high = transfer.plots.rates.getPlotItem().getViewBox().viewRange()[1]
    assert high >= wire.ceiling.rate / MiB


def test_a_wire_read_before_the_page_attached_is_drawn(
        pages: tuple[Session, TransferPage, DonePage, JobBridge]) -> None:
    session, transfer, _done, _bridge = pages
    assert session.job is not None
    session.job.wire_seen(shaped())  # the preflight's event, emitted before the page followed
    transfer.attach(JobBridge(session.job, session.store, transfer))
    assert transfer.plots.rates.ceiling.isVisible()


def test_a_compressed_stream_s_share_is_what_the_wire_carries(
        pages: tuple[Session, TransferPage, DonePage, JobBridge]) -> None:
    """zstd in transit: the stream arrives at 130 MiB/s while the wire carries 45 MiB/s of
    it; the share is the wire's (98 %), never the stream's 283 %."""
    _session, transfer, _done, bridge = pages
    wire = shaped()
    assert wire.ceiling is not None
    bridge.on_event(wire)
    rate, carried = 130 * MiB, 0.98 * wire.ceiling.rate
    bridge.on_event(Progress(10.0, int(10 * rate), 4 * int(10 * rate), rate, 30.0,
                             wire_rate=carried))
    transfer._show_progress()
    text = transfer.ui.progress_label.text()
    assert ("130 MiB/s, the wire carries 45.1 MiB/s compressed, 98% of the 400 Mb/s "
            "shaping on lab-src: the wire is the limit") in text, text
