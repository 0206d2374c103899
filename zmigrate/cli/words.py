"""The command line's words for the engine's findings, advice and doctor notes.

The engine says what it found as data (engine/findings.py); the kinds both faces word alike
come from engine/plain_words.py, the rest is worded here for someone at a terminal: the flags
of `zmigrate send` and `zmigrate doctor` (`--bwlimit`, `--transport tcp`, `--buffer`,
`--ssh-option`, `--write-test`). Every sentence starts with a capital letter. The
--json events carry these words as `text`, `advice` and `note`, next to the data.
"""

from __future__ import annotations

from typing import Any, assert_never

from zmigrate.engine.verdict.diagnosis import Verdict

from ..engine import plain_words
from ..engine.destination import Emptiness
from ..engine.doctor import DoctorReport, StageResult
from ..engine.errors import PreflightError, PreflightReason, ZmigrateError
from ..engine.events import Synced
from ..engine.findings import Advice, AdviceKind, Finding, FindingKind, Note, NoteKind
from ..engine.history import JobRecord
from ..engine.plain_words import DD
from ..engine.units import MiB, format_rate, format_size, size_arg


def finding(f: Finding) -> str:
    """A verdict's headline."""
    k = FindingKind
    match f.kind:
        case k.RATE_LIMITED:
            return f"The transfer runs at the --bwlimit cap of {format_rate(f.num('rate_limit'))}"
        case (k.RECEIVE_SWINGS | k.RECEIVE_FULL | k.RECEIVE_FILLING | k.RECEIVE_DRAINING |
                k.RECEIVE_STARVED | k.SEND_FULL | k.BOTH_EMPTY |
                k.NOT_ENOUGH_DATA | k.TOO_SHORT | k.BUFFER_EMPTY | k.BUFFER_BALANCED |
                k.RECEIVER_WAITS | k.BALANCED | k.STALLED | k.STALL_CLEARED |
                k.COMPRESSOR_SLOW | k.AT_THE_WIRE | k.END_CPU):
            return plain_words.finding(f)
        case _:
            assert_never(f.kind)


def advice(a: Advice) -> str:
    """One thing to do, naming the flags to use."""
    k = AdviceKind
    match a.kind:
        case k.RAISE_RATE_LIMIT:
            return (f"Raise or drop --bwlimit (now {size_arg(a.count('rate_limit'))}) "
                    "to go faster")
        case k.RECEIVE_BUFFER:
            rate, seconds = a.num("rate"), a.num("seconds")
            if a.has("memory"):
                return (f"Give the receiver as large a buffer as its memory allows: "
                        f"--buffer {size_arg(a.count('size'))} (a quarter of its "
                        f"{format_size(a.num('memory'))} free) holds {seconds:g} s of stream at "
                        f"{rate / MiB:.0f} MiB/s; 5 s would need more memory there")
            return (f"Give the receiver a buffer of at least {seconds:g} s of stream: "
                    f"{rate * seconds / MiB:.0f} MiB at {rate / MiB:.0f} MiB/s "
                    f"(--buffer {size_arg(a.count('size'))})")
        case k.RECEIVE_STALLS:
            return (f"The receive buffer ({format_size(a.num('buffer'))}) already holds "
                    f"{a.num('seconds'):.0f} s of stream: the destination pool itself stalls")
        case k.RECEIVE_TXG:
            return ("The destination's zfs receive reads one transaction group at a time; a "
                    "large receive buffer keeps the network flowing in between (a bigger send "
                    "buffer helps much less)")
        case (k.USE_TCP | k.TLS_SPARED | k.USE_TCP_IF_SSH | k.TRY_CIPHER | k.FASTER_CIPHER
              | k.TCP_FASTER | k.SSH_SLOW | k.SSH_UNREACHABLE):
            return _transport_advice(a)
        case k.COMPRESS_ON:
            return (f"{plain_words.compress_gain(a)}: send with --compress {a.word('tool')}")
        case k.COMPRESS_OFF:
            return (f"{plain_words.compress_gain(a)}, no faster than without it "
                    f"({format_rate(a.num('current'))}): leave --compress out")
        case k.COMPRESS_LIGHTER:
            return (f"The compressor ({a.word('tool')}) cannot keep up with the stream: try "
                    "--compress lz4 (faster, less gain) or leave --compress out")
        case k.RELAY_BYPASS:
            return ("If the hosts can reach each other, --transport tcp (or ssh) skips this "
                    "computer")
        case k.RUN_DOCTOR:
            return "Measure each stage alone: zmigrate doctor SRC DST"
        case k.SOURCE_READ:
            return (f"The source reads at about {format_rate(a.num('rate'))}: time "
                    "`zfs send SNAPSHOT > /dev/null` (or through `mbuffer -o /dev/null`) on the "
                    "source; if it is no faster, the pool is the limit")
        case k.WRITE_TEST:
            return f"Measure its write speed alone: zmigrate doctor SRC DST --write-test, or {DD}"
        case k.STALL_WAIT:
            if a.num("timeout"):
                return (f"The job gives up after {plain_words.duration(a.num('timeout'))} "
                        "without a byte (--stall-timeout); it goes on by itself if bytes move "
                        "before")
            return ("The transfer goes on by itself when bytes move again; Ctrl-C stops it, and "
                    "--stall-timeout SECONDS gives up by itself")
        case (k.CIPHER_CPU_BOUND | k.RELAY_PATH | k.RELAY_NEARBY | k.NETWORK_LINK | k.JUMBO_FRAMES |
              k.NIC_RINGS | k.TRANSPORT_CPU | k.SOURCE_DISKS | k.SOURCE_POOL | k.SOURCE_QUIET |
              k.DESTINATION_SLOW | k.DESTINATION_VDEVS | k.DESTINATION_POOL | k.CPU_BOUND |
              k.CLEANUP_FAILED | k.LEFTOVER_DATASET | k.LINK_SLOWER | k.HALF_DUPLEX |
              k.MTU_MISMATCH | k.RINGS_BELOW_MAX | k.HOST_SHAPING | k.CPU_SCALED | k.WIRE_FULL |
              k.LOSSY_LINK | k.TLS_CPU | k.FREE_CPU):
            return plain_words.advice(a)
        case _:
            assert_never(a.kind)


def _transport_advice(a: Advice) -> str:
    """Advice on the way the stream goes, naming --transport and --ssh-option."""
    k = AdviceKind
    match a.kind:
        case k.USE_TCP:
            return "Use --transport tcp instead of ssh (cleartext: trusted networks only)"
        case k.TLS_SPARED:
            return ("On a network you trust, --transport tcp carries the stream without the TLS "
                    "ends and their CPU (cleartext)")
        case k.USE_TCP_IF_SSH:
            return ("If it runs over ssh: use --transport tcp instead (cleartext: trusted "
                    "networks only)")
        case k.TRY_CIPHER:
            return f"Try cipher {a.word('cipher')} (--ssh-option Ciphers={a.word('cipher')})"
        case k.FASTER_CIPHER:
            cipher = a.word("cipher")
            return (f"Over ssh, cipher {cipher} carries {format_rate(a.num('rate'))} against "
                    f"{format_rate(a.num('default_rate'))} for the default: try it "
                    f"(--ssh-option Ciphers={cipher})")
        case k.TCP_FASTER:
            tcp, ssh = a.num("tcp_rate"), a.num("ssh_rate")
            return (f"TCP carries {format_rate(tcp)}, {tcp / ssh:.1f}x ssh: use --transport tcp "
                    "instead of ssh where the network is trusted")
        case k.SSH_SLOW:
            return (f"SSH carries {format_rate(a.num('rate'))}: use --transport tcp instead of "
                    "ssh on trusted networks")
        case k.SSH_UNREACHABLE:
            return (f"The source cannot ssh to the destination: {a.word('reason')} (only "
                    "--transport ssh needs it)")
        case _:
            raise ValueError(f"{a.kind} is not about the transport")


def note(n: Note) -> str:
    """A note on one doctor stage."""
    k = NoteKind
    match n.kind:
        case k.NEEDS_SNAPSHOT:
            return "Give the source as HOST:pool/dataset@snapshot to time it"
        case k.WRITE_SYNC:
            return f"From /dev/urandom, incl. {n.num('seconds'):.1f} s sync"
        case k.LEFT_OUT:
            return "Left out (--no-write-test or --stage)"
        case k.NO_ROOM:
            return (f"Only {format_size(n.num('free'))} free under {n.word('parent')}: the test "
                    f"writes at most {n.num('share'):.0%} of it and needs "
                    f"{format_size(n.num('minimum'))}; give HOST:pool/dataset with more room")
        case (k.RAN_TO_END | k.FROM_CACHE | k.SSH_UNREACHABLE | k.NO_POOL | k.WRITE_LIMIT
              | k.COMPRESS_SAMPLE | k.NO_COMPRESSOR | k.RESENT | k.IFACE_LOSS):
            return plain_words.note(n)
        case _:
            assert_never(n.kind)


# -- the verdict --------------------------------------------------------------------------------
def replaced(e: Emptiness) -> str:
    """The plan's note on the dataset whose whole content the copy replaces."""
    if e.empty:
        return f"{e.dataset} is empty ({e.why}): the copy is received into it as itself"
    return (f"--force replaces the WHOLE content of {e.dataset} with the copy, without a "
            f"snapshot of it; lost: {plain_words.contents(e)}")


def verdict_lines(v: Verdict) -> list[str]:
    """The verdict for a terminal: the headline, then one line per piece of advice."""
    sure = f" (confidence {v.confidence:.0%})" if v.confidence > 0 else ""
    lines = [f"verdict: {finding(v.finding)}{sure}"]
    lines += [f"  - {advice(a)}" for a in v.advice]
    return lines


def verdict_json(data: dict[str, Any]) -> dict[str, Any]:
    """A verdict's --json form (Verdict.to_json, also found in the `done` event) with the words
    added: `text` (the headline) and `advice` (a list of sentences)."""
    verdict = Verdict.from_json(data)
    if verdict is None:
        return data
    out = {k: v for k, v in data.items() if k not in ("text", "advice")}
    at = list(out).index("kind") + 1 if "kind" in out else len(out)
    items = list(out.items())
    words = [("text", finding(verdict.finding)), ("advice", [advice(a) for a in verdict.advice])]
    return dict(items[:at] + words + items[at:])


def stored_verdict(job: JobRecord) -> str | None:
    """A recorded job's verdict headline: worded here from its data, else the text an older
    record kept."""
    verdict = Verdict.from_json(job.verdict_data)
    return finding(verdict.finding) if verdict is not None else job.verdict_text


# -- the doctor ---------------------------------------------------------------------------------
def stage_note(stage: StageResult) -> str:
    """A stage's notes as one cell: "Ran to its end after 3 MiB; Small snapshot: ..."."""
    return "; ".join(note(n) for n in stage.notes)


def stage_json(stage: StageResult) -> dict[str, Any]:
    """A doctor_stage event: the stage's data with its notes worded as `note`."""
    data = stage.to_json()
    data["note"] = stage_note(stage)
    return data


def report_json(report: DoctorReport) -> dict[str, Any]:
    """The doctor_report event: the report's data, its stages' notes and its advice worded."""
    data = report.to_json()
    data["stages"] = [stage_json(s) for s in report.stages]
    data["advice"] = [advice(a) for a in report.advice]
    return data


def refusal_fix(exc: PreflightError) -> str:
    """A refusal's fix in the command line's words, from its kind and figures: the engine's
    own fix names this face's flags, so most kinds say it as it is; a kind another face
    words differently is worded here."""
    f = exc.figures
    match exc.reason:
        case PreflightReason.CHANGED:
            return ("nothing was destroyed; run again to review the plan (--dry-run lists what "
                    "it destroys now) and agree to it")
        case PreflightReason.MOUNT_COLLISION if f.get("way") == "golive":
            return ("go live under a folder of your choice where nothing is mounted "
                    "(--mount-root PATH), or free those paths on the destination; nothing was "
                    "changed")
        case (PreflightReason.OTHER | PreflightReason.POOL_ROOT | PreflightReason.MISSING_TOOL
              | PreflightReason.NO_SOURCE | PreflightReason.NO_PARENT
              | PreflightReason.PARTIAL_RECEIVE | PreflightReason.PARTIAL_MISMATCH
              | PreflightReason.STALE_TOKEN | PreflightReason.NOT_EMPTY
              | PreflightReason.ALREADY_THERE | PreflightReason.BASE_MISSING
              | PreflightReason.NO_COMMON_SNAPSHOT | PreflightReason.DIVERGED
              | PreflightReason.UNSUPPORTED | PreflightReason.KEY_NOT_LOADED
              | PreflightReason.NO_ADDRESS | PreflightReason.NO_PORT | PreflightReason.NO_SPACE
              | PreflightReason.PERMISSION | PreflightReason.MOUNT_COLLISION
              | PreflightReason.BUSY):
            return exc.fix or ""
        case _:
            assert_never(exc.reason)


def error_text(exc: ZmigrateError) -> str:
    """An error as the command line says it: `host: message`, then its fix (a refusal's in
    this face's words, `refusal_fix`)."""
    text = f"{exc.host}: {exc.message}" if exc.host else exc.message
    fix = refusal_fix(exc) if isinstance(exc, PreflightError) else exc.fix
    return text + (f"\n  fix: {fix}" if fix else "")


def synced_line(e: Synced) -> str:
    """`catch-up 3: 1.2 MiB in 4 s, verified @zmigrate-...; ...` or its fault."""
    from ..engine.golive.readonly_window import duration

    what = "first copy" if e.number == 1 else f"catch-up {e.number}"
    then = f"; the next in {duration(e.next_in)}" if e.next_in else ""
    if not e.ok:
        fix = f" ({e.fix})" if e.fix else ""
        return f"{what} failed: {e.error}{fix}{then} (it resumes)"
    window = (f"; a final sync now would keep the source read-only for about "
              f"{duration(e.window)}" if e.window is not None else "")
    return (f"{what}: {format_size(e.bytes)} in {duration(e.seconds)}, verified "
            f"@{e.snapshot}{window}{then}")
