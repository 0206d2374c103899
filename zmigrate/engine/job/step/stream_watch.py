"""What both mbuffers of a step report, read as it comes: status lines become samples, and
each side's summary, hash and last words are kept for the step's result and its errors."""

from __future__ import annotations

import collections
import threading
import time
from dataclasses import dataclass, field

from ...errors import TransferError
from ...events import LogLine, Observer, Sample, Side
from ...readings import mbuffer
from ...transports.listener import CONNECTED_MARK, LISTENING_MARK, UNCHECKED_WORD, parse_taken

FINAL_LINES_WAIT = 30.0  # seconds for mbuffer's summary and hash to arrive after its exit (a slow
# emulated guest under load took more than 10)
Emit = Observer


@dataclass
class SideState:
    """What one mbuffer has told us so far."""

    side: Side
    host: str
    splitter: mbuffer.LineSplitter = field(default_factory=mbuffer.LineSplitter)
    last: mbuffer.Status | None = None
    summary: mbuffer.Summary | None = None
    hash: str | None = None
    tail: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=40))
    empty_events: int = 0
    lines: int = 0  # status lines so far
    last_at: float | None = None  # when the last one came (monotonic)
    # Set once mbuffer's last lines are in: its summary, and its hash when one was asked for.
    final: threading.Event = field(default_factory=threading.Event)

    @property
    def total(self) -> int:
        """The bytes this mbuffer has passed on so far (its summary's, else its last line's)."""
        if self.summary is not None:
            return self.summary.total
        return self.last.total if self.last is not None else 0


class StreamWatch:
    """Reads the output of a step's processes into both sides' `SideState`.

    `listening`, `settled`, `taken` and `peer_connected` are set by a listening transport's
    probe (transports/listener.py)."""

    def __init__(self, send: SideState, receive: SideState, emit: Emit, t0: float,
                 stream_hash: bool) -> None:
        self.send = send
        self.receive = receive
        self.emit = emit
        self.t0 = t0
        self.stream_hash = stream_hash
        self.listening = threading.Event()  # the listener's probe saw its port listen
        self.peer_connected = threading.Event()  # ... and then the sender connect
        # The probe has its answer: listening (set with `listening`) or the port taken.
        self.settled = threading.Event()
        self.unchecked = False  # no tool there names a socket's owner: listening, unchecked
        self.taken: tuple[str, str] | None = None  # (pid, `user args`) of the port's holder

    def output(self, state: SideState, data: bytes, both: bool = False) -> None:
        for piece in state.splitter.feed(data):
            self.line(state, piece, both)

    def line(self, state: SideState, line: str, both: bool = False) -> None:
        status = mbuffer.parse_status(line)
        if status is not None:
            t = time.monotonic() - self.t0
            targets = (self.send, self.receive) if both else (state,)
            for st in targets:
                if st.side is Side.RECEIVE and st.last is not None and st.last.fill > 0 \
                        and status.fill == 0:
                    st.empty_events += 1
                st.last = status
                st.lines += 1
                st.last_at = time.monotonic()
                self.emit(Sample(t, st.side, status.in_rate, status.out_rate, status.total,
                                 status.fill))
            return
        summary = mbuffer.parse_summary(line)
        if summary is not None:
            t = time.monotonic() - self.t0
            for st in (self.send, self.receive) if both else (state,):
                st.summary = summary
                self._final(st)
                if st.last is None:
                    # Done before mbuffer's first status line: the summary is this side's
                    # one point, so even a one-second transfer plots something per side.
                    self.emit(Sample(t, st.side, summary.rate, summary.rate, summary.total, 0.0))
            return
        digest = mbuffer.parse_hash(line)
        if digest is not None:
            for st in (self.send, self.receive) if both else (state,):
                st.hash = digest
                self._final(st)
            return
        text = line.strip()
        if text in (LISTENING_MARK, f"{LISTENING_MARK} {UNCHECKED_WORD}"):
            self.unchecked = text != LISTENING_MARK
            self.listening.set()
            self.settled.set()
            return
        taken = parse_taken(text)
        if taken is not None:
            self.taken = taken
            self.settled.set()
            return
        if text == CONNECTED_MARK:
            self.peer_connected.set()
            return
        if text.startswith("mbuffer: ") and mbuffer.parse_status(text[9:]):
            return
        # setsid -w reports a child ended by our own signal (tail -F, cancel): not news.
        if text and "No controlling terminal" not in text \
                and not text.startswith("setsid: child "):
            state.tail.append(text)
            self.emit(LogLine(state.host, state.side, text))

    def _final(self, st: SideState) -> None:
        if st.summary is not None and (st.hash is not None or not self.stream_hash):
            st.final.set()

    def await_final(self) -> None:
        """Wait (bounded) for both mbuffers' last lines before the step is judged.

        A process's exit can be seen before its output is all read - a log followed by
        `tail -F`, an SSH channel whose status overtakes its stderr - so a result built at
        once may lack the hash: with --hash that must fail the job, not pass it unchecked.
        """
        deadline = time.monotonic() + FINAL_LINES_WAIT
        for st in (self.send, self.receive):
            st.final.wait(max(0.0, deadline - time.monotonic()))
        if not self.stream_hash:
            return
        for st, end in ((self.send, "the sender"), (self.receive, "the receiver")):
            if st.hash is None:
                what = "no hash" if st.summary is not None else "neither summary nor hash"
                raise TransferError(
                    f"the stream hash was asked for, but {end}'s mbuffer reported {what} "
                    f"within {FINAL_LINES_WAIT:.0f} s of its end",
                    host=st.host,
                    fix="the data arrived but could not be checked; run it again, or without "
                    "the hash check",
                )
