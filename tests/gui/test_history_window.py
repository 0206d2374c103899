"""The History window over a temporary store filled by the real Recorder (no lab)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from history_data import make_plan, record, synthetic
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot
from replay_trace import load_trace

from zmigrate.engine.history import History
from zmigrate.engine.units import MiB
from zmigrate.engine.verdict.diagnosis import Bottleneck
from zmigrate.gui import markup, words
from zmigrate.gui.models.job_table_model import BYTES, RATE, ROUTE, SORT_ROLE, START, VERDICT
from zmigrate.gui.windows.history_window import HistoryWindow

pytestmark = pytest.mark.gui
DAY = 86400.0


@pytest.fixture
def store(history_dir: Path) -> dict[str, int]:
    """Three jobs: the recorded 60 MiB run, a slow run with dips, and a failed one."""
    base = time.time() - 3 * DAY
    path = history_dir / "history.sqlite3"
    return {
        "trace": record(path, make_plan("tank/data@trace", key="a1"),
                        load_trace("trace-tcp-60M.json"), base),
        "slow": record(path, make_plan("tank/home@before", dataset="backup/home", key="a2",
                                       buffer=64 * MiB),
                       synthetic(40, 80 * MiB, dips=True), base + DAY),
        "failed": record(path, make_plan("tank/vm@nightly", destination="nas-02",
                                         dataset="pool/vm", key="a3"),
                         synthetic(10, 50 * MiB, dips=False, fail=True), base + 2 * DAY),
    }


@pytest.fixture
def window(qtbot: QtBot, store: dict[str, int]) -> HistoryWindow:
    w = HistoryWindow()
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: w.model.rowCount() == 3 and not w.loading, timeout=5000)
    return w


def column(w: HistoryWindow, col: int) -> list[str]:
    return [w.proxy.index(r, col).data() for r in range(w.proxy.rowCount())]


def test_lists_jobs_newest_first_with_their_numbers(window: HistoryWindow) -> None:
    routes = column(window, ROUTE)
    assert routes == ["lab-src → nas-02:pool/vm", "lab-src → lab-dst:backup/home",
                      "lab-src → lab-dst:backup/data"]
    assert column(window, 3) == ["failed", "verified", "verified"]
    assert column(window, BYTES)[2] == "60.2 MiB"
    assert column(window, RATE)[2].endswith("MiB/s")
    assert "3 transfers" in window.ui.status_label.text()


def test_sorting_uses_values_and_filter_narrows(window: HistoryWindow, qtbot: QtBot) -> None:
    w = window
    w.ui.job_table.sortByColumn(BYTES, Qt.SortOrder.AscendingOrder)
    sizes = [w.proxy.index(r, BYTES).data(SORT_ROLE) for r in range(3)]
    assert sizes == sorted(sizes)  # by bytes as numbers, not as "60.2 MiB" text
    w.ui.job_table.sortByColumn(START, Qt.SortOrder.AscendingOrder)
    assert column(w, 2)[0] == "tank/data@trace"
    qtbot.keyClicks(w.ui.filter_edit, "HOME")
    assert column(w, 2) == ["tank/home@before"]
    assert "1 of 3 transfers shown" in w.ui.status_label.text()
    w.ui.filter_edit.clear()
    w.ui.outcome_combo.setCurrentText("failed")
    assert column(w, 2) == ["tank/vm@nightly"]
    w.ui.outcome_combo.setCurrentIndex(0)
    assert w.proxy.rowCount() == 3


def test_opening_a_job_draws_the_stored_points(window: HistoryWindow, qtbot: QtBot,
                                               store: dict[str, int],
                                               history_dir: Path) -> None:
    w = window
    with History(history_dir / "history.sqlite3") as h:
        sends = h.samples(store["slow"], "send")
        receives = h.samples(store["slow"], "receive")
    w.select_ids([store["slow"]])
    qtbot.waitUntil(lambda: w.job_view.job is not None and not w.detail_loading, timeout=5000)
    assert w.ui.detail_stack.currentWidget() is w.ui.job_page
    xs, ys = w.job_view.plots.rates.send.getData()
    assert len(xs) == len(sends) == 80
    assert ys[0] == pytest.approx(sends[0].in_rate / MiB)
    fx, _ = w.job_view.plots.fill.receiver.getData()
    assert len(fx) == len(receives)
    commands = w.job_view.ui.commands_edit.toPlainText()
    assert "# on lab-src" in commands and "zfs send tank/home@before" in commands
    assert "verified" in w.job_view.ui.title_label.text()
    w.select_ids([store["failed"]])
    qtbot.waitUntil(lambda: w.job_view.job is not None
                    and w.job_view.job.id == store["failed"], timeout=5000)
    assert "out of space" in w.job_view.ui.error_label.text()


def test_verdicts_are_the_wizards_words(window: HistoryWindow, qtbot: QtBot,
                                        store: dict[str, int]) -> None:
    """The Diagnoser's verdicts are stored as data and worded here, never as CLI flags."""
    w = window
    cells = column(w, VERDICT)
    assert set(cells) <= {words.bottleneck(b) for b in Bottleneck}, cells
    tips = [w.proxy.index(r, VERDICT).data(Qt.ItemDataRole.ToolTipRole) for r in range(3)]
    assert all(t[:1].isupper() and "--" not in t for t in tips), tips
    w.select_ids([store["slow"]])
    qtbot.waitUntil(lambda: w.job_view.job is not None and not w.detail_loading, timeout=5000)
    job = w.job_view.job
    assert job is not None
    headline = words.stored_verdict(job)
    assert headline is not None and headline[:1].isupper() and "--" not in headline
    assert markup.escape(headline) in w.job_view.ui.facts_label.text()


def test_compare_overlays_two_jobs(window: HistoryWindow, qtbot: QtBot,
                                   store: dict[str, int], history_dir: Path) -> None:
    w = window
    assert not w.ui.compare_button.isEnabled()
    w.select_ids([store["trace"], store["slow"]])
    assert w.ui.compare_button.isEnabled()
    w.ui.compare_button.click()
    qtbot.waitUntil(lambda: len(w.compare_view.jobs) == 2 and not w.detail_loading,
                    timeout=5000)
    assert w.ui.detail_stack.currentWidget() is w.ui.compare_page
    plots = w.compare_view.plots
    assert [j.id for j in w.compare_view.jobs] == [store["trace"], store["slow"]]  # older first
    with History(history_dir / "history.sqlite3") as h:
        counts = [len(h.samples(i, "receive")) for i in (store["trace"], store["slow"])]
    assert [len(c.getData()[0]) for c in plots.rate_curves] == counts
    assert [len(c.getData()[0]) for c in plots.fill_curves] == counts
    # Distinct styles, and a legend naming each job.
    pens = [c.opts["pen"] for c in plots.rate_curves]
    assert pens[0].color() != pens[1].color() and pens[0].style() != pens[1].style()
    assert plots.names[0].startswith(f"before: #{store['trace']} @trace")
    assert plots.names[1].startswith(f"after: #{store['slow']} @before")
    title = plots.rates.getPlotItem().titleLabel.text
    assert "@trace" in title and "@before" in title
    assert "after" in w.compare_view.ui.numbers_label.text()


def test_thousand_jobs_list_quickly(qtbot: QtBot, history_dir: Path) -> None:
    path = history_dir / "history.sqlite3"
    record(path, make_plan(), synthetic(2, 10 * MiB, dips=False), time.time() - 10)
    with History(path) as h:
        conn = h.connect()
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO jobs (job_key, started, heartbeat, ended, source, destination, "
            "snapshot, destination_dataset, kind, transport, options, commands, outcome, bytes, "
            "avg_rate) SELECT job_key, started - ?, heartbeat, ended, source, destination, "
            "snapshot, destination_dataset, kind, transport, options, commands, outcome, "
            "bytes, avg_rate FROM jobs WHERE id = 1", [(i * 60.0,) for i in range(1, 1000)])
        conn.execute("COMMIT")
        conn.close()
    w = HistoryWindow()
    qtbot.addWidget(w)
    # The work this process does (all its threads' CPU), not the wall time a loaded machine
    # stretches.
    t0 = time.process_time()
    w.show()
    qtbot.waitUntil(lambda: w.model.rowCount() == 1000, timeout=20000)
    assert time.process_time() - t0 < 2.0
    t0 = time.process_time()
    w.ui.job_table.sortByColumn(RATE, Qt.SortOrder.AscendingOrder)
    w.ui.filter_edit.setText("lab-dst")
    assert time.process_time() - t0 < 0.5


def test_every_control_is_named(window: HistoryWindow) -> None:
    from test_forms import _unnamed

    assert _unnamed(window) == []
