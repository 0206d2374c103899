"""Page 5: the plan in words, the estimate, and the exact command each host will run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget, QWizard

from zmigrate.engine.golive import readonly_window
from zmigrate.engine.golive.final_sync import final_sync_window
from zmigrate.engine.golive.readonly_window import Window
from zmigrate.engine.hosts import leftovers
from zmigrate.engine.verdict.diagnosis import GIGABIT_RATE

from ...engine import plain_words
from ...engine.events import Event, StageChanged
from ...engine.job import Job, Request
from ...engine.losses import Loss
from ...engine.plan import Plan
from ...engine.tree import TreeEntry, TreeJob, TreePlan
from ...engine.tree.planning.listing import DatasetCommands, Listed, list_commands
from ...engine.units import format_size
from .. import forms, markup, style, words
from ..generated.ui_review_page import Ui_ReviewPage
from ..jobs.start import transfer_argv
from ..plots.axes import elapsed
from ..session import Session
from ..settings import Settings
from ..threads import run_task
from ..widgets.runner_choice import NOT_HANDED_OVER, RunnerChoice
from .base import Page

# Past this many datasets Review lists each one's step but not its exact commands: each costs a
# preflight round trip to both hosts.
COMMANDS_FOR = 40


def plan_with_commands(job: TreeJob) -> tuple[TreePlan, list[tuple[TreeEntry, list[str]]],
                                              Window | None]:
    """The tree's plan, each dataset's exact commands and, for a final sync, its read-only
    window (remote: call it off the GUI thread)."""
    plan = job.prepare()
    window = final_sync_window(job)
    return plan, [(d.entry, _lines(d)) for d in list_commands(job, plan, COMMANDS_FOR)], window


def _lines(d: DatasetCommands) -> list[str]:
    """One dataset's rows of the commands box."""
    match d.listed:
        case Listed.SKIPPED:
            return []
        case Listed.CARRIED:
            return [f"# arrives in the raw replication stream of {d.entry.carried_by}"]
        case Listed.LATER:
            return ["# (its commands are decided when it runs)"]
        case Listed.UNDECIDED:
            # Decided again when it runs (e.g. after its parent arrives): say so, not fail.
            return [f"# decided when it runs: {d.error.message if d.error else ''}"]
        case Listed.COMMANDS:
            ahead = [f"# planned as if @{d.ahead} existed (it is taken first)"] if d.ahead \
                else []
            return ahead + [f"# on {host}\n{line}" for host, line in d.commands]
        case _:
            assert_never(d.listed)


def losses_html(lost: Sequence[Loss], source: str, destination: str) -> str:
    """`Will be destroyed on HOST:` and each thing by name, for every host that loses any;
    then `Will be hidden on HOST:` (unmounted, or covered by a mount)."""
    return "".join(
        f"<br><br><b>Will be {'hidden' if hidden else 'destroyed'} on "
        f"{markup.escape(host)}:</b><br>"
        + "<br>".join("• " + markup.escape(line) for line in lines)
        for hidden in (False, True)
        for host, lines in plain_words.losses_by_host(lost, source, destination,
                                                      hidden=hidden))


class ReviewPage(Page):
    """Runs the job's preflight (`prepare`) off the GUI thread when shown; Next starts it.

    The plan shown is kept in the session (`session.plan`, with `session.job`: one
    dataset's, or a tree's), and the Transfer page runs exactly that plan.
    """

    def __init__(self, session: Session, settings: Settings,
                 parent: QWidget | None = None) -> None:
        super().__init__(session, settings, parent)
        self.ui = Ui_ReviewPage()
        forms.setup(self.ui, self)
        self.ui.commands_edit.setFont(style.monospace())
        # Soft wrap: long pipelines stay readable, and copying still gives one line each.
        self.ui.commands_edit.setLineWrapMode(self.ui.commands_edit.LineWrapMode.WidgetWidth)
        self.ui.copy_button.clicked.connect(self.copy_commands)
        self.setCommitPage(True)
        self.setButtonText(QWizard.WizardButton.CommitButton, "&Start transfer")
        for w in (self.ui.size_label, self.ui.time_label):
            style.set_role(w, "value")
        style.set_role(self.ui.warnings_label, "note")
        style.set_role(self.ui.busy_label, "muted")
        self._generation = 0
        self.preparing = False
        # What the preflight stopped on a host (an earlier run's leftovers), shown with the plan.
        self.cleanup_notes: list[str] = []
        self.runner = RunnerChoice()  # where the transfer runs: here, or a runner host
        self.ui.page_layout.addWidget(self.runner)
        self.runner.changed.connect(self.completeChanged)

    def _collect_cleanup(self, job: Job | TreeJob) -> None:
        """Keep what the coming preflight says it stopped (said on the task's thread)."""
        notes: list[str] = []
        self.cleanup_notes = notes

        def collect(event: Event) -> None:
            if isinstance(event, StageChanged) and event.stage == leftovers.STAGE:
                notes.append(event.detail)

        job.subscribe(collect)

    def _show_notes(self, warnings: list[str]) -> None:
        notes = [*self.cleanup_notes, *warnings]
        if notes:
            self.ui.warnings_label.setText("<br>".join(markup.escape(w) for w in notes))

    def initializePage(self) -> None:
        s = self.session
        self.runner.set_hosts(s.src_spec, s.dst_spec)
        self.runner.logins = s.logins
        if s.tree is not None:
            self._prepare_tree()
            return
        assert s.src_host is not None and s.dst_host is not None
        assert s.snapshot is not None and s.destination is not None
        s.plan = None
        request = Request(s.snapshot.name, s.destination, s.choices())
        s.job = Job(s.src_host, s.dst_host, request,
                    src_caps=s.src_caps, dst_caps=s.dst_caps)
        self._generation += 1
        generation = self._generation
        self.preparing = True
        self._clear()
        self.ui.busy_bar.show()
        self.ui.busy_label.setText("Checking both hosts: free port, space, estimated size…")
        job = s.job
        assert isinstance(job, Job)
        self._collect_cleanup(job)
        run_task(job.prepare, lambda plan: self._on_plan(generation, job, plan),
                 lambda exc: self._on_failed(generation, exc))
        self.completeChanged.emit()

    def _prepare_tree(self) -> None:
        """Plan the tree with the engine off the GUI thread; the Transfer page runs this job
        with this plan."""
        s = self.session
        s.plan = None
        job = s.job = s.new_tree_job()
        self._generation += 1
        generation = self._generation
        self.preparing = True
        self._clear()
        self.ui.busy_bar.show()
        self.ui.busy_label.setText("Planning the tree: both inventories, collisions…")
        self._collect_cleanup(job)
        run_task(lambda: plan_with_commands(job),
                 lambda result: self._on_tree_plan(generation, job, *result),
                 lambda exc: self._on_failed(generation, exc))
        self.completeChanged.emit()

    def _on_tree_plan(self, generation: int, job: TreeJob, plan: TreePlan,
                      dataset_commands: list[tuple[TreeEntry, list[str]]],
                      window: Window | None) -> None:
        if generation != self._generation:
            return
        self._done()
        s = self.session
        s.plan = plan
        options = job.request.options
        self.ui.summary_label.setText(markup.escape(
            plan.describe() + " Parents first; " + (
                f"up to {job.width} small datasets at once, a big one alone"
                if job.width > 1 else "one dataset at a time")
            + "; each is verified (guid, snapshots, properties).")
            + losses_html(plan.destroys, plan.source_host, plan.destination_host))
        self.ui.size_label.setText(f"Size: about {format_size(plan.total)}")
        self._show_notes([words.room(plan.room)] if plan.room and plan.room.short else [])
        rate = options.rate_limit or (GIGABIT_RATE if not s.same_host else None)
        if rate and plan.total:
            self.ui.time_label.setText(f"Time: about {elapsed(plan.total / rate)} at "
                                       + ("the rate limit" if options.rate_limit
                                          else "1 GbE"))
        if window is not None:
            # What a final sync asks of the user: how long the source stays read-only.
            self.ui.time_label.setText("Final sync: " + readonly_window.describe(window))
        lines: list[str] = []
        for host, cmd in plan.commands():
            what = "snapshot now" if cmd == plan.snapshot_command else "final sync"
            lines += [f"# {what}, on {host}", cmd, ""]
        for entry, commands in dataset_commands:
            lines.append(f"# {entry.source} -> {entry.destination}: {entry.action}"
                         + (f" ({entry.reason})" if entry.reason else ""))
            lines += [*commands, ""]
        self.ui.commands_edit.setPlainText("\n".join(lines).rstrip() + "\n")
        self.ui.copy_button.setEnabled(True)
        self.runner.refuse("" if transfer_argv(s) is not None else NOT_HANDED_OVER)
        self.completeChanged.emit()

    def _clear(self) -> None:
        for w in (self.ui.summary_label, self.ui.size_label, self.ui.time_label,
                  self.ui.warnings_label, self.ui.error_label):
            w.setText("")
        self.ui.commands_edit.clear()
        self.ui.copy_button.setEnabled(False)

    def _done(self) -> None:
        self.preparing = False
        self.ui.busy_bar.hide()
        self.ui.busy_label.setText("")

    def _on_plan(self, generation: int, job: Job, plan: Plan) -> None:
        if generation != self._generation:
            return
        self._done()
        s = self.session
        # The Transfer page starts this very plan (Job.start(plan=...)): the commands shown
        # below, with their port and log names, are the commands that run.
        s.plan = plan
        self.ui.summary_label.setText(markup.escape(plan.describe())
                                      + losses_html(plan.destroys, plan.source, plan.destination))
        if plan.estimate:
            exact = "" if plan.estimate_exact else " (approximate)"
            self.ui.size_label.setText(f"Size: {format_size(plan.estimate)}{exact}")
            rate = plan.options.rate_limit or (GIGABIT_RATE if plan.carrier.two_ends else None)
            if rate:
                basis = "at the rate limit" if plan.options.rate_limit else "at 1 GbE"
                self.ui.time_label.setText(
                    f"Time: about {elapsed(plan.estimate / rate)} {basis}")
        else:
            self.ui.size_label.setText("Size: unknown until it runs")
        lost = plan.replaces if plan.replaces is not None and not plan.replaces.empty else None
        self._show_notes([*map(words.caveat, plan.warnings),
                          *([words.replaced(lost)] if lost else [])])
        lines = []
        for host, line in plan.commands():
            lines.append(f"# on {host}")
            lines.append(line)
            lines.append("")
        self.ui.commands_edit.setPlainText("\n".join(lines).rstrip() + "\n")
        self.ui.copy_button.setEnabled(True)
        self.runner.refuse("" if transfer_argv(s) is not None else NOT_HANDED_OVER)
        self.completeChanged.emit()

    def _on_failed(self, generation: int, exc: Exception) -> None:
        if generation != self._generation:
            return
        self._done()
        self.session.plan = None
        self.ui.error_label.setText(words.error_html(exc) + "<br>Go back to change the choices.")
        style.set_banner(self.ui.error_label, "error")
        self.completeChanged.emit()

    def copy_commands(self) -> None:
        """Put the commands on the clipboard."""
        clipboard = QGuiApplication.clipboard()
        clipboard.setText(self.ui.commands_edit.toPlainText())
        self.ui.copy_button.setText("Copied")

    def isComplete(self) -> bool:
        s = self.session
        ready = (s.tree_plan if s.tree is not None else s.dataset_plan) is not None
        return ready and not self.preparing and self.runner.ready

    def validatePage(self) -> bool:
        """Start: on the runner host chosen and checked, or (None) on this computer."""
        self.session.runner_check = self.runner.checked if self.runner.runner() else None
        return True

    def cleanupPage(self) -> None:
        self._generation += 1
        self._done()
        self.session.job = self.session.plan = None
