"""GUI tests: offscreen Qt, settings in a temporary ini file, a wizard that always shuts down."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from pytestqt.qtbot import QtBot  # noqa: E402

from zmigrate.engine.hosts import LocalHost  # noqa: E402
from zmigrate.engine.job import Job, Request  # noqa: E402
from zmigrate.engine.readings.samples import SampleStore  # noqa: E402
from zmigrate.gui import style  # noqa: E402
from zmigrate.gui.job_bridge import JobBridge  # noqa: E402
from zmigrate.gui.pages.done_page import DonePage  # noqa: E402
from zmigrate.gui.pages.transfer_page import DETACHED, TransferPage  # noqa: E402
from zmigrate.gui.session import Session  # noqa: E402
from zmigrate.gui.settings import Settings  # noqa: E402
from zmigrate.gui.threads import collect_on_gui_thread  # noqa: E402
from zmigrate.gui.wizard import MigrationWizard  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def gui_thread_collector(qapp: QApplication) -> None:
    """Cycles are collected on the GUI thread only, as in the app (gui/threads/collector.py): a page
    a test made is otherwise deleted by whichever worker thread trips the collector."""
    collect_on_gui_thread()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Transfers run in this process (the tests written before runners follow the job as a
    Job of their own); test_long_job_lab.py hands them to a runner (`detached_settings`)."""
    s = Settings(QSettings(str(tmp_path / "zmigrate.ini"), QSettings.Format.IniFormat))
    s.set_value(DETACHED, False)
    return s


@pytest.fixture(autouse=True)
def jobs_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every GUI test's runner jobs live apart from the user's."""
    path = tmp_path / "jobs"
    monkeypatch.setenv("ZMIGRATE_JOBS_DIR", str(path))
    monkeypatch.setenv("ZMIGRATE_RUNNER_LAUNCHER", "setsid")
    return path


@pytest.fixture
def wizard(qtbot: QtBot, settings: Settings) -> Iterator[MigrationWizard]:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setStyleSheet(style.STYLE_SHEET)
    w = MigrationWizard(settings)
    qtbot.addWidget(w)
    w.show()
    try:
        yield w
    finally:
        w.shutdown()


@pytest.fixture(autouse=True)
def history_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every GUI test records into (and reads) a history of its own, never the user's."""
    path = tmp_path / "history"
    monkeypatch.setenv("ZMIGRATE_DATA_DIR", str(path))
    return path


@pytest.fixture
def pages(qtbot: QtBot, settings: Settings) -> tuple[Session, TransferPage, DonePage, JobBridge]:
    """The Transfer and Done pages of one job's session, the Transfer page attached to its
    bridge (events are fed with `bridge.on_event`; nothing runs)."""
    session = Session()
    host = LocalHost()
    session.store = SampleStore()
    session.job = Job(host, host, Request("tank/data@one", "backup/data"))
    transfer = TransferPage(session, settings)
    done = DonePage(session, settings)
    qtbot.addWidget(transfer)
    qtbot.addWidget(done)
    transfer.show()
    bridge = JobBridge(session.job, session.store, transfer)
    transfer.attach(bridge)
    return session, transfer, done, bridge
