"""The Doctor dialog: time each stage between the wizard's two hosts and name the slowest.

The doctor runs on a pool thread (it blocks for stages × seconds); its stage events come back
through a QObject's signals, queued to the GUI thread. Cancel asks the doctor to stop and the
dialog stays up, saying so, until the doctor has killed its processes and cleaned up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, assert_never

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QDialog, QWidget

from zmigrate.engine.verdict.diagnosis import BUFFER_SECONDS, suggested_buffer

from ...engine import plain_words
from ...engine.doctor import (
    DEFAULT_SECONDS,
    TEMP_PREFIX,
    WRITE_SHARE,
    DoctorReport,
    StageResult,
    StageStarted,
)
from ...engine.events import (
    DatasetState,
    EndCpu,
    Event,
    Failed,
    Finished,
    LogLine,
    OutOfTouch,
    PlanReady,
    Progress,
    Resent,
    Sample,
    StageChanged,
    Stalled,
    Synced,
    TreePlanReady,
    Verdict,
    Wire,
)
from ...engine.hosts import Host
from ...engine.plan import Options
from ...engine.units import format_size, size_arg
from .. import forms, markup, style, words
from ..generated.ui_doctor_dialog import Ui_DoctorDialog
from ..plots.stage_bars import StageBars
from ..threads import run_task
from .doctor_leftovers import DoctorLike, name_leftovers_first

DoctorFactory = Callable[..., DoctorLike]


def five_second_buffer(rate: float) -> int:
    """A receive buffer of BUFFER_SECONDS of stream at `rate`, rounded up as the advice does."""
    return suggested_buffer(rate, BUFFER_SECONDS)


def title(stage: StageResult) -> str:
    """A stage's title to start a sentence with ("Source read (zfs send)", "SSH, default
    cipher")."""
    if stage.title.startswith("ssh"):
        return "SSH" + stage.title[3:]
    return stage.title[:1].upper() + stage.title[1:]


def cpu_notes(report_or_stages: DoctorReport | list[StageResult]) -> list[str]:
    """One line per stage whose busiest process is worth a mention (held a core, or >= 50 %)."""
    stages = (report_or_stages.stages if isinstance(report_or_stages, DoctorReport)
              else report_or_stages)
    notes = []
    for s in stages:
        busiest = s.busiest
        if busiest is None:
            continue
        if s.cpu_bound is not None:
            notes.append(f"{title(s)}: {busiest.name} used {busiest.cpu:.0f}% of a core on "
                         f"{busiest.host} (CPU-bound)")
        elif busiest.cpu >= 50:
            notes.append(f"{title(s)}: {busiest.name} at {busiest.cpu:.0f}% of a core "
                         f"on {busiest.host}")
    return notes


def wire_notes(report: DoctorReport) -> list[str]:
    """Each side's link as its host read it, and the path's ceiling (none: not read)."""
    wire = report.wire
    if wire is None:
        return []
    return [f"Source {wire.source.host}: {plain_words.link_detail(wire.source)}",
            f"Destination {wire.destination.host}: {plain_words.link_detail(wire.destination)}",
            f"Ceiling: {plain_words.ceiling_words(wire.ceiling)}"]


def private_notes(report: DoctorReport) -> list[str]:
    """What the private transport (TLS) would carry on this path, beside Direct TCP."""
    cost = report.private_cost
    return [] if cost is None else ["Private (TLS 1.3) on this path: " + cost.describe()]


def stage_notes(report: DoctorReport) -> list[str]:
    """One line per stage with notes: why it was skipped, how it ended."""
    return [f"{title(s)}: " + "; ".join(words.note(n) for n in s.notes)
            for s in report.stages if s.notes]


class _Relay(QObject):
    """Carries the doctor's events from its thread to the dialog (queued signal)."""

    arrived = Signal(object)


class DoctorDialog(QDialog):
    """Stage duration, the opt-in write test, Run/Cancel, the bar chart and the verdict.

    Args:
        src, dst: the wizard's connected hosts (the dialog never closes them).
        snapshot: the chosen snapshot (the source read stage sends it to /dev/null).
        parent_dataset: where the write test may make its temporary dataset (None: no test).
        options: the transport and its options as the Transport page has them.
        doctor_factory: builds the doctor (zmigrate.engine.doctor.Doctor; tests pass a stand-in).

    Signals:
        buffer_chosen(int): "Use a 5 s buffer" was pressed; bytes.
        finished_run(object): the DoctorReport (or the exception) once the doctor returned.
    """

    buffer_chosen = Signal(int)
    finished_run = Signal(object)

    def __init__(self, src: Host, dst: Host, *, snapshot: str | None,
                 parent_dataset: str | None, options: Options,
                 doctor_factory: DoctorFactory | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ui = Ui_DoctorDialog()
        forms.setup(self.ui, self)
        ui = self.ui
        self.src, self.dst = src, dst
        self.snapshot, self.parent_dataset, self.options = snapshot, parent_dataset, options
        if doctor_factory is None:
            from ...engine.doctor import Doctor

            doctor_factory = Doctor
        self.doctor_factory = doctor_factory
        self.doctor: DoctorLike | None = None
        self.report: DoctorReport | None = None
        self.stages: list[StageResult] = []
        self.running = False
        self.stopping = False
        self._close_when_done = False
        self.chart = StageBars()
        forms.embed(ui.chart_host, self.chart)
        self.relay = _Relay(self)
        self.relay.arrived.connect(self._on_event)
        self.setAccessibleName("Doctor")
        where = f"{markup.escape(src.label)} → {markup.escape(dst.label)}"
        snap = f", reading <b>{markup.escape(snapshot)}</b>" if snapshot else ""
        ui.intro_label.setText(
            f"Times each stage of a transfer {where} alone{snap}: disk read on the source, the "
            "network between the two mbuffers (in the clear, and inside TLS where the private "
            "transport is the way), ssh with its default and fast ciphers, and "
            "disk write on the destination (a temporary dataset). Nothing is sent to the "
            "destination's datasets.")
        ui.seconds_spin.setValue(int(DEFAULT_SECONDS))
        ui.seconds_spin.setMaximumWidth(120)
        ui.write_check.setChecked(True)  # the destination is often the slowest stage
        ui.write_check.toggled.connect(self._on_write_toggled)
        style.set_role(ui.write_warning, "note")
        style.set_role(ui.status_label, "muted")
        style.set_role(ui.expected_label, "value")
        style.set_role(ui.cpu_label, "muted")
        self._on_write_toggled(True)
        ui.run_button.clicked.connect(self.run)
        ui.cancel_button.clicked.connect(self.cancel)
        ui.close_button.clicked.connect(self.reject)
        ui.buffer_button.clicked.connect(self._on_buffer)
        ui.run_button.setDefault(True)
        self._set_running(False)
        ui.buffer_button.setEnabled(False)
        self.resize(780, 760)

    # -- the form -----------------------------------------------------------------------------
    def _on_write_toggled(self, on: bool) -> None:
        ui = self.ui
        where = (markup.escape(self.parent_dataset) if self.parent_dataset is not None
                 else "the pool with the most free space")
        ui.write_warning.setText(
            f"Creates a temporary dataset {TEMP_PREFIX}… under {where} on "
            f"{markup.escape(self.dst.label)}, writes random data into it for the stage's time "
            f"(at most {WRITE_SHARE:.0%} of the free space), and always destroys it afterwards."
            if on else "Off: nothing is written on the destination; the doctor cannot tell "
            "how fast it writes.")

    def _set_running(self, running: bool) -> None:
        ui = self.ui
        self.running = running
        for w in (ui.seconds_spin, ui.run_button):
            w.setEnabled(not running)
        ui.write_check.setEnabled(not running)
        ui.cancel_button.setEnabled(running and not self.stopping)
        ui.close_button.setEnabled(not running)

    # -- running ------------------------------------------------------------------------------
    def run(self) -> None:
        """Start the doctor off the GUI thread."""
        if self.running:
            return
        ui = self.ui
        self.report = None
        self.stages = []
        self.stopping = False
        self.chart.clear_stages()
        for label in (ui.expected_label, ui.cpu_label, ui.advice_label):
            label.setText("")
        ui.buffer_button.setEnabled(False)
        write = ui.write_check.isChecked()
        try:
            doctor = self.doctor_factory(
                self.src, self.dst, snapshot=self.snapshot,
                parent=self.parent_dataset,
                seconds=float(ui.seconds_spin.value()), write_test=write,
                options=self.options, emit=self.relay.arrived.emit)
        except Exception as exc:  # noqa: BLE001 - a bad choice is shown, not raised
            ui.status_label.setText(words.error_html(exc))
            return
        self.doctor = doctor
        self._set_running(True)
        if not write:
            self._start(doctor)
            return
        ui.status_label.setText("Looking for what earlier doctor runs left on the destination…")
        name_leftovers_first(self, doctor, self.dst.label, lambda: self.stopping, self._start,
                             self._not_run, self._on_error)

    def _not_run(self) -> None:
        self._finish()
        self.ui.status_label.setText("Not run.")

    def _start(self, doctor: DoctorLike) -> None:
        self.ui.status_label.setText("Checking both hosts…")
        run_task(doctor.run, self._on_report, self._on_error)

    def cancel(self) -> None:
        """Stop the doctor; the dialog waits (without blocking) until it has cleaned up."""
        if not self.running or self.doctor is None or self.stopping:
            return
        self.stopping = True
        self.ui.cancel_button.setEnabled(False)
        self.ui.status_label.setText("Stopping the running stage and cleaning up…")
        self.doctor.cancel()

    def _on_event(self, event: Event) -> None:
        if not self.running:
            return
        match event:
            case StageStarted():
                if not self.stopping:
                    self.ui.status_label.setText(
                        f"Measuring {markup.escape(event.title)} for {event.seconds:g} s…")
            case StageResult():
                self.stages.append(event)
                note = "skipped" if event.skipped else ("failed" if event.error else "")
                self.chart.add_stage(event.name, event.title, event.rate, event.in_path, note)
            case (PlanReady() | TreePlanReady() | StageChanged() | Sample() | LogLine() | Progress()
                  | Stalled() | DatasetState() | Verdict() | Finished() | Failed() | Wire()
                  | Synced() | EndCpu() | Resent() | OutOfTouch()):
                pass  # a job's kinds: the doctor emits none (its report carries the wire)
            case _:
                assert_never(event)

    def _on_report(self, report: DoctorReport) -> None:
        self.report = report
        self._finish()
        ui = self.ui
        # Stages the relay has not delivered yet are in the report: draw from it.
        self.chart.clear_stages()
        for s in report.stages:
            note = "skipped" if s.skipped else ("failed" if s.error else "")
            self.chart.add_stage(s.name, s.title, s.rate, s.in_path, note)
        self.stages = list(report.stages)
        self.chart.set_bottleneck(report.bottleneck)
        slow = report.stage(report.bottleneck) if report.bottleneck else None
        if report.cancelled:
            ui.status_label.setText("Cancelled: every process was stopped and cleaned up; "
                                    "the stages measured before are shown.")
        else:
            ui.status_label.setText(f"Done: {len(report.stages)} stages measured, "
                                    f"{report.seconds:g} s each.")
        if slow is not None and report.expected_rate:
            ui.expected_label.setText(
                f"Bottleneck: {markup.escape(slow.title)}. Expect about "
                f"{format_size(report.expected_rate)}/s end to end.")
        elif slow is not None:
            ui.expected_label.setText(
                f"Slowest measured: {markup.escape(slow.title)} at "
                f"{format_size(slow.rate or 0)}/s. The transfer runs at most that fast; "
                "these were not measured: "
                + markup.escape("; ".join(
                    f"{st.title} ({st.error or '; '.join(words.note(n) for n in st.notes)})"
                    for st in (report.stage(n) for n in report.unmeasured) if st is not None)))
        else:
            ui.expected_label.setText("No stage on the transfer's path was measured.")
        parts = [f"<b>{head}</b><br>" + "<br>".join(markup.escape(n) for n in lines)
                 for head, lines in (("Link", wire_notes(report)),
                                     ("Transport", private_notes(report)),
                                     ("CPU", cpu_notes(report)), ("Notes", stage_notes(report)))
                 if lines]
        ui.cpu_label.setText("<br>".join(parts))
        errors = [f"{title(s)} failed: {s.error}" for s in report.stages if s.error]
        items = [*errors, *(words.advice(a) for a in report.advice)]
        ui.advice_label.setText("<b>Advice</b>" + words.items_html(items) if items else "")
        ui.buffer_button.setEnabled(bool(report.expected_rate))
        if report.expected_rate:
            size = five_second_buffer(report.expected_rate)
            ui.buffer_button.setText(f"Use a &5 s buffer ({size_arg(size)})")
            ui.buffer_button.setToolTip(f"Set the Transport page's buffer to {size_arg(size)}: "
                                        f"{BUFFER_SECONDS:g} s at "
                                        f"{format_size(report.expected_rate)}/s")
        self.finished_run.emit(report)
        self._maybe_close()

    def _on_error(self, exc: Exception) -> None:
        self._finish()
        self.ui.status_label.setText(words.error_html(exc))
        self.finished_run.emit(exc)
        self._maybe_close()

    def _finish(self) -> None:
        self.stopping = False
        self._set_running(False)
        self.doctor = None

    def _maybe_close(self) -> None:
        if self._close_when_done:
            self._close_when_done = False
            super().reject()

    def _on_buffer(self) -> None:
        if self.report is not None and self.report.expected_rate:
            self.buffer_chosen.emit(five_second_buffer(self.report.expected_rate))

    # -- closing ------------------------------------------------------------------------------
    def reject(self) -> None:
        """Esc and Close: while the doctor runs, stop it and close once it has cleaned up."""
        if self.running:
            self._close_when_done = True
            self.cancel()
            return
        super().reject()

    def closeEvent(self, event: Any) -> None:
        if self.running:
            event.ignore()
            self.reject()
            return
        super().closeEvent(event)
