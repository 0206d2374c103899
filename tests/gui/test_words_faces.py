"""Every verdict and every doctor report the engine makes, as the wizard shows them.

The verdicts come from sample traces replayed through the real Diagnoser, the doctor's advice
from the real advise() (tests/every_kind.py). Each is shown on the Transfer page, the Done page
or in the Doctor dialog, and what the user reads there must be sentences that start with a
capital letter, name the wizard's controls (never a command-line flag) and carry no Python
repr (a tuple, a list, None).
"""

from __future__ import annotations

import html
import re

import pytest
from every_kind import reports, verdicts
from PySide6.QtGui import QTextDocument
from pytestqt.qtbot import QtBot

from zmigrate.engine.doctor import DoctorReport, StageStarted
from zmigrate.engine.errors import TransferError
from zmigrate.engine.events import StageChanged
from zmigrate.engine.findings import AdviceKind, FindingKind, NoteKind
from zmigrate.engine.hosts import Host, LocalHost
from zmigrate.engine.losses import Loss
from zmigrate.engine.plan import Options
from zmigrate.engine.remedies import Caveat, Remedy
from zmigrate.engine.verdict.diagnosis import Bottleneck
from zmigrate.gui import markup, words
from zmigrate.gui.dialogs.doctor_dialog import DoctorDialog
from zmigrate.gui.job_bridge import JobBridge
from zmigrate.gui.pages.done_page import DonePage
from zmigrate.gui.pages.transfer_page import TransferPage
from zmigrate.gui.session import Session

pytestmark = pytest.mark.gui

VERDICTS = verdicts()
REPORTS = reports()
FLAG = re.compile(r"--[A-Za-z]")  # a command-line flag: `--bwlimit`, `--transport`
CLI = re.compile(r"--[A-Za-z]|`zmigrate ")  # the command line's own words: a flag, a command
REPR = re.compile(r"\('|\[|\]|\bNone\b|\{|\}")  # a tuple, a list, None, a dict


def plain(rich: str) -> str:
    """What the user reads in a rich-text label."""
    doc = QTextDocument()
    doc.setHtml(rich)
    return doc.toPlainText()


def sentences(rich: str) -> list[str]:
    """The sentences of a label: its bold headline, its list items and its lines."""
    out = []
    for part in re.split(r"<br>|<li>|</li>|<ul[^>]*>|</ul>", rich):
        text = html.unescape(re.sub(r"<[^>]+>", "", part)).strip()
        if text:
            out.append(text)
    return out


def check(rich: str) -> str:
    """Fail on a flag, a repr or a sentence in lower case; the plain text."""
    text = plain(rich)
    assert text.strip(), "nothing shown"
    assert not FLAG.search(text), f"a command-line flag in the wizard: {text!r}"
    assert not FLAG.search(rich), rich
    assert not REPR.search(text), f"a Python repr in the wizard: {text!r}"
    for sentence in sentences(rich):
        assert sentence[:1].isupper(), f"not a capital: {sentence!r} in {text!r}"
    return text


def test_the_cases_cover_every_kind() -> None:
    assert {v.kind for v in VERDICTS.values()} == set(Bottleneck)
    assert {v.finding.kind for v in VERDICTS.values()} == set(FindingKind)
    assert {a.kind for v in VERDICTS.values() for a in v.advice} \
        | {a.kind for r in REPORTS.values() for a in r.advice} == set(AdviceKind)
    assert {a.kind for r in REPORTS.values() for a in r.advice} >= {
        AdviceKind.CPU_BOUND, AdviceKind.SOURCE_POOL, AdviceKind.NETWORK_LINK,
        AdviceKind.SSH_SLOW, AdviceKind.DESTINATION_POOL, AdviceKind.FASTER_CIPHER,
        AdviceKind.TCP_FASTER, AdviceKind.CIPHER_CPU_BOUND, AdviceKind.SSH_UNREACHABLE,
        AdviceKind.CLEANUP_FAILED, AdviceKind.RECEIVE_BUFFER}
    assert {n.kind for r in REPORTS.values() for s in r.stages for n in s.notes} == set(NoteKind)


@pytest.mark.parametrize("remedy", list(Remedy))
def test_every_remedy_in_the_wizards_words(remedy: Remedy) -> None:
    """An error's way out and a plan warning's, as the command line says it (its flags and
    commands) and as the wizard does (its controls, or nothing where it offers none)."""
    figures = {"port": "9000", "address": "192.0.2.9"}
    err = TransferError("the step failed", host="nas", fix="what happened",
                        remedies=(remedy,), figures=figures)
    assert err.fix is not None and err.fix.startswith("what happened; ")
    assert CLI.search(err.fix), err.fix
    shown = plain(words.error_html(err))  # the error's own message is not a sentence
    assert not CLI.search(shown) and not REPR.search(shown), shown
    said = words.remedy(remedy, figures)
    assert said or remedy in (Remedy.COMPRESS_ALWAYS, Remedy.SSH_OPTION), remedy
    assert shown.endswith("\nFix: What happened" + (f"; {said}" if said else "")), shown
    warning = Caveat("dst: something to know", (remedy,), figures)
    assert CLI.search(str(warning)), str(warning)
    assert words.caveat(warning) == (f"dst: something to know: {said}" if said
                                     else "dst: something to know")


def test_a_plan_warning_on_the_transfer_pages_stage_line(
        pages: tuple[Session, TransferPage, DonePage, JobBridge], qtbot: QtBot) -> None:
    """The job says its plan's warnings as it starts (StageChanged, the command line's words
    in its detail): the Transfer page's stage line names the wizard's choice instead."""
    _, transfer, _, bridge = pages
    warning = Caveat("nas: the listener on port 9000 takes a connection from any address",
                     (Remedy.OPEN_LISTENER,))
    bridge.on_event(StageChanged("preflight", str(warning), caveat=warning))
    qtbot.waitUntil(lambda: "any address" in transfer.ui.stage_label.text())
    shown = transfer.ui.stage_label.text()
    assert "Direct TCP, private" in shown and not FLAG.search(shown), shown


@pytest.mark.parametrize("name", list(VERDICTS))
def test_every_verdict_on_the_transfer_and_done_pages(
        name: str, pages: tuple[Session, TransferPage, DonePage, JobBridge]) -> None:
    session, transfer, done, bridge = pages
    verdict = VERDICTS[name]
    bridge.on_event(verdict)  # as the Diagnoser sends it through the job
    assert session.verdict is verdict
    assert not transfer.ui.verdict_frame.isHidden()
    done.initializePage()
    assert not done.ui.verdict_frame.isHidden()
    for label in (transfer.ui.verdict_label, done.ui.verdict_label):
        rich = label.text()
        check(rich)
        assert f"<b>{markup.escape(words.finding(verdict.finding))}</b>" in rich
        for a in verdict.advice:
            assert f"<li>{markup.escape(words.advice(a))}</li>" in rich
        assert rich.count("<li>") == len(verdict.advice)


def test_a_way_held_by_its_ends_cpu_is_listed_by_that_cpu() -> None:
    """The History's and the first page's job lists name the end, not "The network"."""
    assert words.verdict_bottleneck(VERDICTS["private end on its core"]) \
        == "The CPU of socat on dst"
    assert words.verdict_bottleneck(VERDICTS["ssh end waiting for a cpu"]) \
        == "The CPU of ssh on src"
    assert words.verdict_bottleneck(VERDICTS["network over private"]) == "The network"


class ReportingDoctor:
    """Stands in for the doctor: emits a report's stages from the worker thread, returns it."""

    report: DoctorReport

    def __init__(self, src: Host, dst: Host, **kw: object) -> None:
        self.emit = kw["emit"]
        self.clear_leftovers: frozenset[str] = frozenset()

    def named_losses(self) -> tuple[Loss, ...]:
        return ()  # no earlier run left anything

    def run(self) -> DoctorReport:
        assert callable(self.emit)
        for s in self.report.stages:
            self.emit(StageStarted(s.name, s.title, 10.0))
            self.emit(s)
        return self.report

    def cancel(self) -> None:
        pass


@pytest.mark.parametrize("name", list(REPORTS))
def test_every_doctor_report_in_the_dialog(name: str, qtbot: QtBot) -> None:
    report = REPORTS[name]
    doctor = type("Doctor", (ReportingDoctor,), {"report": report})
    dialog = DoctorDialog(LocalHost("tank.lan"), LocalHost("backup-01"),
                          snapshot="tank/data@s", parent_dataset="backup", options=Options(),
                          doctor_factory=doctor)
    qtbot.addWidget(dialog)
    dialog.show()
    with qtbot.waitSignal(dialog.finished_run, timeout=5000):
        dialog.run()
    ui = dialog.ui
    advice = ui.advice_label.text()
    check(advice)
    for a in report.advice:
        assert f"<li>{markup.escape(words.advice(a))}</li>" in advice
    assert advice.count("<li>") == len(report.advice) + sum(1 for s in report.stages if s.error)
    notes = ui.cpu_label.text()
    if any(s.notes for s in report.stages):
        check(notes)
        for s in report.stages:
            for n in s.notes:
                assert markup.escape(words.note(n)) in notes
    for label in (ui.status_label, ui.expected_label, ui.buffer_button):
        check(label.text())
    dialog.reject()
