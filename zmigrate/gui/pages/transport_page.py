"""Page 4: how the stream travels (TCP, SSH, same host) and the mbuffer tuning."""

from __future__ import annotations

from dataclasses import replace
from typing import assert_never

from PySide6.QtWidgets import QRadioButton, QWidget

from zmigrate.engine.verdict.diagnosis import BUFFER_SECONDS, GIGABIT_RATE, buffer_suggestion

from ...engine.findings import Advice
from ...engine.plan import DEFAULT_BLOCK, MEMORY_SHARE, Options, stream_of
from ...engine.transports import Compression, Transport, carrier, chosen
from ...engine.transports.compress import Stream, Suggestion, Suggests, suggest
from ...engine.transports.private import lacking as private_lacking
from ...engine.units import MiB, format_size, parse_size, size_arg
from .. import forms, markup, style
from ..dialogs.doctor_dialog import DoctorDialog, DoctorFactory
from ..generated.ui_transport_page import Ui_TransportPage
from ..session import Session
from ..settings import Settings
from ..widgets.listener_addresses import ListenerAddresses
from .base import Page

# stall_combo's choices (ui/transport_page.ui): keep waiting, or give up after 1, 5, 15 min.
STALL_CHOICES: tuple[float | None, ...] = (None, 60.0, 300.0, 900.0)
# The transport the user picked by hand (a new key: the old "transport" held the default too).
CHOICE_KEY = "transport_choice"


def buffer_hint(advice: Advice, rate_limit: float | None) -> str:
    """Why the engine's suggested buffer (diagnosis.buffer_suggestion) is that size, in words."""
    f = advice.figures
    rate = (f"the rate limit ({format_size(int(rate_limit))}/s)" if rate_limit
            else f"{GIGABIT_RATE / 1e6:.0f} MB/s (1 GbE)")
    why = f"about {BUFFER_SECONDS:.0f} s of stream at {rate}"
    memory = f.get("memory")
    if isinstance(memory, (int, float)):
        why += (f", cut to fit {MEMORY_SHARE:.0%} of the free memory "
                f"({format_size(int(memory))}), which holds {f['seconds']:g} s")
    return why


def compression_hint(s: Suggestion) -> str:
    """Why the engine suggests this compression in transit (transports.compress.suggest)."""
    match s.why:
        case Suggests.ONE_HOST:
            return "both ends are on one host: nothing crosses a link"
        case Suggests.RAW:
            return "the stream of an encrypted dataset is raw: it does not compress"
        case Suggests.AS_STORED:
            return (f"the dataset is stored compressed (compression={s.stored}) and its blocks "
                    "go as stored: they gain little from compressing again")
        case Suggests.NO_TOOL:
            return f"zstd is not on {s.host} ({s.install})"
        case Suggests.STORED_OFF | Suggests.COMPRESSIBLE:
            why = ("the dataset is stored uncompressed (compression=off)"
                   if s.why is Suggests.STORED_OFF else "compressible data travels smaller")
            return (f"{why}: zstd pays on links slower than the source's CPU compresses "
                    "(below 1 Gbit/s, typically); the Doctor measures both")
        case _:
            assert_never(s.why)


def private_note(missing: list[tuple[str, str]], by_hand: bool = False) -> str:
    """What the private choice is and why it is the default, or why it is off (each host
    that lacks its tools, with how to get them there); `by_hand`: another way is checked, the
    one the user picked last time."""
    if missing:
        return ("Not available: " + "; ".join(
            f"{label} has neither socat nor OpenSSL 3 ({hint})" for label, hint in missing)
            + ". One of them carries the stream, so Direct TCP is the default; choose SSH to "
            "encrypt.")
    return ("The default: both hosts can take it. Encrypted and authenticated with keys made "
            "for this job: no one else on the network or the source host can read the stream "
            "or feed the receive (the wire still shows that the hosts talk, the port, how "
            "much and when). It costs CPU on both hosts: the Doctor measures how much between "
            "your hosts." + (" Checked instead: the way you picked by hand last time."
                             if by_hand else ""))


def first_transport(ui: Ui_TransportPage, s: Session, picked: str) -> Transport:
    """The transport checked as the page opens: local on one host; between two, the one the
    user last picked by hand where it is on offer, else the default between these hosts. The
    private choice is enabled where both hosts can take it, its note saying why (or why not)."""
    missing = private_lacking([(s.src_host.label if s.src_host else "", s.src_caps),
                               (s.dst_host.label if s.dst_host else "", s.dst_caps)])
    able = not s.same_host and not missing
    ui.private_radio.setEnabled(able)
    between = {t.value: t for t in (Transport.TCP, Transport.SSH, Transport.RELAY)}
    if able:
        between[Transport.PRIVATE.value] = Transport.PRIVATE
    tools = (s.src_caps.tools if s.src_caps else None, s.dst_caps.tools if s.dst_caps else None)
    first = chosen(None if s.same_host else between.get(picked), s.same_host, tools)
    # Private is the default where it is able: another checked was picked by hand.
    by_hand = able and first is not chosen(None, s.same_host, tools)
    ui.private_note.setText(private_note(missing, by_hand))
    return first


class TransportPage(Page):
    """Transport radio buttons with their notes, buffer/block/port/rate and readonly."""

    def __init__(self, session: Session, settings: Settings,
                 parent: QWidget | None = None) -> None:
        super().__init__(session, settings, parent)
        self.ui = Ui_TransportPage()
        forms.setup(self.ui, self)
        style.set_role(self.ui.tcp_note, "note")
        style.set_role(self.ui.ssh_note, "muted")
        style.set_role(self.ui.private_note, "muted")
        style.set_role(self.ui.local_note, "muted")
        style.set_role(self.ui.buffer_hint, "muted")
        ui = self.ui
        for field in (ui.buffer_combo, ui.block_combo, ui.port_spin, ui.rate_edit,
                      ui.connect_edit, ui.allow_edit):
            field.setMaximumWidth(260)
        self.addresses = ListenerAddresses(ui, self._on_changed)
        for t, w in self._radios().items():
            w.toggled.connect(self._on_changed)
            # Remembered only when picked by hand (clicked): the default follows the hosts.
            w.clicked.connect(lambda _c=False, t=t: setattr(self, "_transport_choice", t.value))
        self._transport_choice: str = settings.value(CHOICE_KEY, "")
        ui.buffer_combo.currentTextChanged.connect(self._on_changed)
        ui.compress_combo.currentTextChanged.connect(self._on_changed)
        # The user's own choice (activated: by hand only) outlives the suggestion.
        self._compress_choice: str = settings.value("compress", "")
        ui.compress_combo.activated.connect(
            lambda _i: setattr(self, "_compress_choice", ui.compress_combo.currentText()))
        for w in self._radios().values():
            w.toggled.connect(self._suggest_compression)
        ui.block_combo.currentTextChanged.connect(self._on_changed)
        self._suggested = ""  # the buffer size last suggested (shown unless the user chose)
        ui.rate_edit.textChanged.connect(self._on_rate_changed)
        ui.block_combo.setCurrentText(settings.value("block", size_arg(DEFAULT_BLOCK)))
        ui.rate_edit.setText(settings.value("rate_limit", ""))
        ui.readonly_check.setChecked(settings.value("readonly", True))
        ui.intermediates_check.setChecked(settings.value("intermediates", True))
        ui.hash_check.setChecked(settings.value("verify_hash", False))
        ui.stall_combo.setCurrentIndex(max(0, min(len(STALL_CHOICES) - 1,
                                                  settings.value("stall_choice", 0))))
        self._user_buffer = settings.value("buffer", "")
        self.error = ""
        style.set_role(ui.doctor_hint, "muted")
        ui.doctor_button.clicked.connect(self.open_doctor)
        self.doctor_dialog: DoctorDialog | None = None
        self.doctor_factory: DoctorFactory | None = None  # None: zmigrate.engine.doctor.Doctor

    def initializePage(self) -> None:
        s = self.session
        ui = self.ui
        same = s.same_host
        ui.local_radio.setEnabled(same)
        self._radios()[first_transport(ui, s, self._transport_choice)].setChecked(True)
        self._fill_buffers()
        self._suggest_compression()
        self._on_changed()
        ready = s.src_host is not None and s.dst_host is not None and s.snapshot is not None
        ui.doctor_button.setEnabled(ready)

    # -- the doctor ---------------------------------------------------------------------------
    def doctor_parent(self) -> str | None:
        """Where the write test may make its temporary dataset: the destination's parent
        (it exists; the destination itself may not, or holds the copy)."""
        dest = self.session.destination
        if not dest:
            return None
        return dest.rsplit("/", 1)[0] if "/" in dest else dest

    def open_doctor(self) -> DoctorDialog | None:
        """Open the Doctor on the wizard's connected hosts (non-modal to the app, modal to
        the wizard); returns the dialog (tests drive it)."""
        s = self.session
        if s.src_host is None or s.dst_host is None:
            return None
        if self.doctor_dialog is not None and self.doctor_dialog.running:
            self.doctor_dialog.raise_()
            return self.doctor_dialog
        try:
            options = self.options()
        except ValueError:
            options = s.options
        if options.transport is None or not carrier(options.transport).doctor_stage:
            # The doctor measures the tcp and ssh paths between the hosts.
            options = replace(options, transport=Transport.TCP)
        dialog = DoctorDialog(s.src_host, s.dst_host,
                              snapshot=s.snapshot.name if s.snapshot else None,
                              parent_dataset=self.doctor_parent(), options=options,
                              doctor_factory=self.doctor_factory, parent=self)
        dialog.buffer_chosen.connect(self.use_buffer)
        dialog.finished.connect(dialog.deleteLater)
        dialog.destroyed.connect(self._forget_doctor)
        self.doctor_dialog = dialog
        dialog.open()
        return dialog

    def _forget_doctor(self) -> None:
        self.doctor_dialog = None

    def stop_doctor(self) -> None:
        """Cancel a running doctor (the app is quitting); it cleans up on its own thread."""
        if self.doctor_dialog is not None and self.doctor_dialog.running:
            self.doctor_dialog.cancel()

    def use_buffer(self, size: int) -> None:
        """Set the buffer field (the doctor's "Use a 5 s buffer")."""
        self.ui.buffer_combo.setCurrentText(size_arg(size))
        self.ui.buffer_hint.setText(f"From the doctor: {size_arg(size)} holds "
                                    f"{BUFFER_SECONDS:.0f} s at the expected rate.")

    def _suggest_compression(self) -> None:
        """Say what is suggested for compression and why; the control keeps the user's last
        choice (none at first): whether it pays depends on the link, which only the Doctor
        measures."""
        s = self.session
        stream = stream_of(s.source_dataset, s.src_caps, s.dst_caps, Options()) \
            if s.source_dataset is not None else Stream()
        suggestion = suggest(carrier(self.transport()), stream,
                             [(h.label, c) for h, c in ((s.src_host, s.src_caps),
                                                        (s.dst_host, s.dst_caps))
                              if h is not None])
        ui = self.ui
        ui.compress_combo.setCurrentText(self._compress_choice or Compression.NONE.value)
        ui.compress_hint.setText(f"Suggested {suggestion.compression.value}: "
                                 f"{markup.escape(compression_hint(suggestion))}.")

    def _compression(self) -> Compression | None:
        if not carrier(self.transport()).crosses_link:
            return None
        asked = Compression(self.ui.compress_combo.currentText())
        return None if asked is Compression.NONE else asked

    def _free_memory(self) -> list[int]:
        s = self.session
        return [c.mem_available for c in (s.src_caps, s.dst_caps)
                if c is not None and c.mem_available]

    def _fill_buffers(self) -> None:
        combo = self.ui.buffer_combo
        current = combo.currentText() or self._user_buffer
        rate = self._rate_or_none()
        advice = buffer_suggestion(rate, self._free_memory())
        size, why = int(advice.figures["size"]), buffer_hint(advice, rate)
        if current == self._suggested:
            # Not the user's choice but the last suggestion: it follows the rate limit (a
            # 512M buffer at 1 MiB/s is memory held for nothing on both hosts).
            current = size_arg(size)
        self._suggested = size_arg(size)
        combo.blockSignals(True)
        combo.clear()
        for c in dict.fromkeys([size, 64 * MiB, 256 * MiB, 1024 * MiB, 2048 * MiB]):
            combo.addItem(size_arg(c))
        combo.setCurrentText(current or size_arg(size))
        combo.blockSignals(False)
        self.ui.buffer_hint.setText(f"Suggested {size_arg(size)}: {markup.escape(why)}.")

    def _rate_or_none(self) -> int | None:
        text = self.ui.rate_edit.text().strip()
        if not text:
            return None
        try:
            return parse_size(text) or None
        except ValueError:
            return None

    def _on_rate_changed(self) -> None:
        self._fill_buffers()
        self._on_changed()

    def _radios(self) -> dict[Transport, QRadioButton]:
        ui = self.ui
        return {Transport.TCP: ui.tcp_radio, Transport.PRIVATE: ui.private_radio,
                Transport.SSH: ui.ssh_radio,
                Transport.RELAY: ui.relay_radio, Transport.LOCAL: ui.local_radio}

    def transport(self) -> Transport:
        """The transport whose radio button is checked (tcp when none is)."""
        return next((t for t, radio in self._radios().items() if radio.isChecked()),
                    Transport.TCP)

    def options(self) -> Options:
        """The options the form describes; raises ValueError naming the bad field."""
        ui = self.ui
        try:
            buffer = parse_size(ui.buffer_combo.currentText().strip())
        except ValueError:
            raise ValueError("The buffer size is not a size (try 512M or 1G).") from None
        try:
            block = parse_size(ui.block_combo.currentText().strip())
        except ValueError:
            raise ValueError("The block size is not a size (try 128k).") from None
        rate_text = ui.rate_edit.text().strip()
        rate = None
        if rate_text:
            try:
                rate = parse_size(rate_text)
            except ValueError:
                raise ValueError("The rate limit is not a size per second (try 50M).") from None
        if block < 4096 or buffer < block * 8:
            raise ValueError("The buffer must hold at least 8 blocks of 4 KiB or more.")
        connect, allow = self.addresses.values(self.transport())
        return replace(
            self.session.options, transport=self.transport(), buffer_size=buffer,
            connect_address=connect, allow_address=allow,
            block_size=block, port=ui.port_spin.value() or None, rate_limit=rate,
            readonly=ui.readonly_check.isChecked(),
            intermediates=ui.intermediates_check.isChecked(),
            verify_hash=ui.hash_check.isChecked(), force=self.session.force,
            stall_timeout=STALL_CHOICES[max(0, ui.stall_combo.currentIndex())],
            compress=self._compression())

    def _on_changed(self) -> None:
        ui = self.ui
        tcp = ui.tcp_radio.isChecked()
        ui.port_spin.setEnabled(carrier(self.transport()).listens)
        self.addresses.enable_for(self.transport())
        ui.tcp_note.setEnabled(tcp)
        ui.compress_combo.setEnabled(carrier(self.transport()).crosses_link)
        try:
            self.options()
            self.error = ""
        except ValueError as exc:
            self.error = str(exc)
        ui.error_label.setText(f"<b>{markup.escape(self.error)}</b>" if self.error else "")
        style.set_role(ui.error_label, "note")
        self.completeChanged.emit()

    def isComplete(self) -> bool:
        return not self.error

    def validatePage(self) -> bool:
        try:
            options = self.options()
        except ValueError:
            return False
        self.session.options = options
        st = self.settings
        st.set_value(CHOICE_KEY, self._transport_choice)
        st.set_value("buffer", self.ui.buffer_combo.currentText().strip())
        st.set_value("block", self.ui.block_combo.currentText().strip())
        st.set_value("rate_limit", self.ui.rate_edit.text().strip())
        st.set_value("readonly", options.readonly)
        st.set_value("intermediates", options.intermediates)
        st.set_value("verify_hash", options.verify_hash)
        st.set_value("stall_choice", self.ui.stall_combo.currentIndex())
        # Remembered only when the user moved it off the suggestion, like the buffer size.
        st.set_value("compress", self._compress_choice)
        st.sync()
        return True
