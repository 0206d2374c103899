"""What the user can do about an error or a plan's warning, as data each face words with its
own controls: the command line's flags here (an error's `fix`, a warning's text), the wizard's
pages and buttons in gui/words.py. Words that name neither stay in the error's own `fix`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import assert_never


class Remedy(Enum):
    """One way out, with the figures its words need (named in the comment)."""

    ROLL_BACK = "roll_back"  # the destination changed after its last snapshot
    DAMAGED = "damaged"  # the stream was damaged in flight: a MAC'd transport catches it
    UNREACHABLE = "unreachable"  # the hosts may not reach each other directly
    PORT_IN_USE = "port_in_use"  # the listener's port was taken since it was picked
    PORT_HELD = "port_held"  # port: a process not ours holds the listener's port
    ALLOW_ADDRESS = "allow_address"  # address: the listener rejected the sender from there
    OPEN_LISTENER = "open_listener"  # the cleartext listener takes any address
    RELAY = "relay"  # the source's own ssh may not reach the destination
    USE_RELAY = "use_relay"  # the source's ssh cannot get through: the stream can go via here
    SSH_OPTION = "ssh_option"  # option, every_hop ("yes"): the source's ssh could take it
    COMPRESS_ALWAYS = "compress_always"  # compression was left out: the user may insist
    CHECK_NAME = "check_name"  # a dataset or snapshot zfs does not know (gone, or mistyped)
    RESUME = "resume"  # the interrupted receive was kept on the destination
    LEAVE_WRITES = "leave_writes"  # nothing can be carried back: go back, writes left
    FINAL_SYNC_FIRST = "final_sync_first"  # going live needs the copy of a final sync
    GO_BACK_FIRST = "go_back_first"  # the copy is live already
    NAME_KEY = "name_key"  # no key, agent key or password could be offered to the host
    LOCAL_RUNNER = "local_runner"  # the runner named is this computer
    FINISH_GO_LIVE = "finish_go_live"  # going live was cut off: finish it, or undo what ran
    GO_BACK_AGAIN = "go_back_again"  # going back stopped: it continues where it stopped
    COPY_GONE = "copy_gone"  # copy: the live copy is gone: rename it back, or go back without it
    THIN_VOLUME = "thin_volume"  # a thick volume's copy will likely not fit where it lands


def command_line(remedy: Remedy, figures: Mapping[str, str]) -> str:
    """`remedy` in the command line's words (its flags)."""
    r = Remedy
    match remedy:
        case r.ROLL_BACK:
            return "the destination changed after its last snapshot: pass --force to roll it back"
        case r.DAMAGED:
            return ("run it again; if it recurs, check the link or use --transport private or "
                    "ssh, whose MAC catches damage in flight")
        case r.UNREACHABLE:
            return ("the two hosts may not reach each other (another network, NAT, a firewall): "
                    "use --transport relay (through this computer) or --transport ssh")
        case r.PORT_IN_USE:
            return "give another --port, or leave it out to pick a free one"
        case r.PORT_HELD:
            port = figures.get("port", "its port")
            return (f"find out why that process listens on port {port} (it may be waiting for "
                    "a stream that is not its own); stop it or give another --port")
        case r.ALLOW_ADDRESS:
            address = figures.get("address", "ADDRESS")
            return (f"if {address} is the source as the destination sees it (NAT, a second "
                    f"network), run again with --allow-address {address}, or use --transport "
                    "private, which proves the source by this job's key")
        case r.OPEN_LISTENER:
            return "give it with --allow-address, or use --transport private"
        case r.RELAY:
            return "if it cannot, use --transport relay"
        case r.USE_RELAY:
            return "or use --transport relay (the stream then goes through this computer)"
        case r.SSH_OPTION:
            every = (" (each --ssh-option applies to every hop)" if figures.get("every_hop")
                     else "")
            return (f"or pass it to the source's ssh with --ssh-option "
                    f"{figures.get('option', 'OPTION')}{every}")
        case r.COMPRESS_ALWAYS:
            return "--compress-always compresses it anyway"
        case r.CHECK_NAME:
            return "check the name with `zmigrate list`"
        case r.RESUME:
            return ("the partial receive was kept on the destination: run again with --resume "
                    "to send only the rest, or --discard-partial to drop it")
        case r.LEAVE_WRITES:
            return ("go back with --leave-writes (the writes stay on the copy under a snapshot, "
                    "to bring over by hand)")
        case r.FINAL_SYNC_FIRST:
            return ("run the final sync first (zmigrate send -r --final): it makes the source "
                    "read-only and copies its last changes")
        case r.GO_BACK_FIRST:
            return "go back first (zmigrate go-live --back), or leave it live"
        case r.NAME_KEY:
            return ("name a key (IdentityFile in ~/.ssh/config or --identity), add one to the "
                    "agent (ssh-add), or use a password")
        case r.LOCAL_RUNNER:
            return "leave --runner out to run the job here"
        case r.FINISH_GO_LIVE:
            return ("then run go-live again to finish it, or go-live --back to undo exactly what "
                    "ran (the history holds it)")
        case r.GO_BACK_AGAIN:
            return ("then run go-live --back again: it continues where it stopped (the history "
                    "holds what is still to undo)")
        case r.COPY_GONE:
            copy = figures.get("copy", "the copy")
            return (f"if it was renamed, rename it back to {copy} and go back again; if it is "
                    "gone for good, go back with --without-copy: the source's own steps are "
                    "undone (its mounts, canmount and readonly as they were), and what was "
                    "written to the copy while live is lost with it")
        case r.THIN_VOLUME:
            return "make room there, or receive the volume thin (--exclude-property refreservation)"
        case _:
            assert_never(remedy)


Words = Callable[[Remedy, Mapping[str, str]], str]  # a face's words of a remedy ("": none)


def fix_words(said: str | None, remedies: tuple[Remedy, ...], figures: Mapping[str, str],
              words: Words = command_line) -> str | None:
    """A fix in one face's `words` (the command line's by default): the words for every face,
    then each remedy's that the face says; None where nothing is said."""
    parts = [said] if said else []
    parts += [w for r in remedies if (w := words(r, figures))]
    return "; ".join(parts) or None


def caveat_words(w: PlanWarning, words: Words = command_line) -> str:
    """A plan's warning in one face's `words`: its text, then the ways out that face says."""
    if isinstance(w, str):
        return w
    ways = fix_words(None, w.remedies, w.figures, words)
    return f"{w.text}: {ways}" if ways else w.text


@dataclass(frozen=True, slots=True)
class Caveat:
    """A plan's warning whose way out names a control: `text` is what every face says, each
    remedy is worded by the face (str() is the command line's)."""

    text: str
    remedies: tuple[Remedy, ...] = ()
    figures: Mapping[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return caveat_words(self)


PlanWarning = str | Caveat  # a plan's warning: words for every face, or one with its ways out
