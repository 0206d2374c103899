"""The wizard's words for the engine's findings, advice and doctor notes, and the Hosts page's
first-run guidance.

The engine says what it found as data (engine/findings.py); the kinds both faces word alike
come from engine/plain_words.py, the rest is worded here for someone in the wizard: the
controls as the forms (ui/*.ui) label them - the Transport and tuning page's Direct TCP, Through
SSH, Buffer size, Rate limit and Doctor…, the doctor's "Also test writing on the
destination" - never a command-line flag. Every sentence starts with a capital letter.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import assert_never

from zmigrate.engine.verdict.diagnosis import Bottleneck, Verdict

from ..engine import plain_words
from ..engine.destination import Emptiness
from ..engine.destination.room import Room
from ..engine.errors import PreflightError, PreflightReason, ZmigrateError
from ..engine.events import Summary
from ..engine.findings import Advice, AdviceKind, Finding, FindingKind, Note, NoteKind
from ..engine.history import JobRecord
from ..engine.plain_words import DD
from ..engine.remedies import PlanWarning, Remedy, caveat_words, fix_words
from ..engine.runner.state import JobState, Status
from ..engine.units import MiB, format_rate, format_size, size_arg
from . import markup

PAGE = "the Transport and tuning page"  # ui/transport_page.ui: the page's title
TCP = "Direct TCP"  # tcp_radio's name
PRIVATE = "Direct TCP, private"  # private_radio's name
SSH = "Through SSH"  # ssh_radio's name
RELAY = "Relayed through this computer"  # relay_radio's name
PORT = "TCP port"  # port_spin's name (0: a free one)
CONNECT_ADDRESS = "Destination address"  # connect_edit's label
ALLOW_ADDRESS = "Accept only from"  # allow_edit's label
BUFFER = "Buffer size"  # buffer_combo's label
RATE_LIMIT = "Rate limit"  # rate_edit's label
DOCTOR = "Doctor…"  # doctor_button
STALLS = "If the transfer stalls"  # stall_combo's label
COMPRESS = "Compression in transit"  # compress_combo's label
WRITE_TEST = "Also test writing on the destination"  # ui/doctor_dialog.ui: write_check
LEAVE_WRITES = "Leave them on the copy"  # golive/buttons.py: the go-back question's button
FINAL_SYNC = "Final sync"  # ui/done_page.ui: final_sync_button
GO_BACK = "Go back"  # ui/done_page.ui: go_back_button
GO_LIVE = "Go live"  # ui/done_page.ui: go_live_button
THIS_COMPUTER = "This computer"  # widgets/runner_choice.py: the runner combo's first choice
SOURCE_PAGE = "the What to send page"  # ui/source_page.ui: the page's title
CLEARTEXT = "cleartext: trusted networks only"
# ui/host_panel.ui: the Hosts page's controls
LOG_IN_WITH = "Log in with"  # auth_label
KEY_FILE = "Key file"  # auth_combo's second choice
PASSWORD = "Password"  # auth_combo's third choice
HOST_PLACEHOLDER = "user@host, user@host:port or an SSH alias"  # host_combo, when empty
SECRET_KEPT = "Kept in memory for this session only, never stored."  # the password dialog
# ui/hosts_page.ui: what of hint_label's usual text the first-run guidance does not say
HOST_KEYS_HINT = "Unknown host keys are shown to you before anything is sent."
# ui/destination_page.ui: unmounted_radio, as the form has it and where the destination's zfs
# has no receive -u (the engine receives the copy's root under its parent, then unmounts all)
UNMOUNTED = "Received &unmounted (-u), mountpoints kept"
NO_UNMOUNTED = "Received under its parent, then &unmounted (this zfs has no -u)"
MOUNTED_UNDER = "Mounted under"  # mount_root_radio
MOUNT_COLLISION_FIX = (f"Pick another parent or name whose mountpoint is free, or choose "
                       f"{MOUNTED_UNDER} and type a directory of your choice")
# With "Mounted under" on a zfs that cannot set the mountpoint as it receives (no -o): the
# copy's root mounts under its parent first, then moves.
MOUNT_COLLISION_ROOT_FIX = ("This zfs mounts the copy's root under its parent before it moves "
                            f"it under the {MOUNTED_UNDER.lower()} directory: pick another "
                            "parent or name whose mountpoint is free")


def _ciphers(cipher: str) -> str:
    """Where a cipher is chosen for the SSH transport: the source host's own ssh carries the
    stream, so its ssh configuration (the wizard has no cipher choice)."""
    return (f"add \"Ciphers {cipher}\" for the destination to ~/.ssh/config on the source "
            f"host, whose ssh carries the stream {SSH}")


def finding(f: Finding) -> str:
    """A verdict's headline."""
    k = FindingKind
    match f.kind:
        case k.RATE_LIMITED:
            return (f"The transfer runs at its {RATE_LIMIT} of "
                    f"{format_rate(f.num('rate_limit'))}")
        case (k.RECEIVE_SWINGS | k.RECEIVE_FULL | k.RECEIVE_FILLING | k.RECEIVE_DRAINING |
                k.RECEIVE_STARVED | k.SEND_FULL | k.BOTH_EMPTY |
                k.NOT_ENOUGH_DATA | k.TOO_SHORT | k.BUFFER_EMPTY | k.BUFFER_BALANCED |
                k.RECEIVER_WAITS | k.BALANCED | k.STALLED | k.STALL_CLEARED |
                k.COMPRESSOR_SLOW | k.AT_THE_WIRE | k.END_CPU):
            return plain_words.finding(f)
        case _:
            assert_never(f.kind)


def _receive_buffer(a: Advice) -> str:
    """How big the receiver's buffer should be, and where to set it."""
    rate, seconds = a.num("rate"), a.num("seconds")
    if a.has("memory"):
        return (f"Give the receiver as large a buffer as its memory allows: set {BUFFER} "
                f"to {size_arg(a.count('size'))} on {PAGE} (a quarter of its "
                f"{format_size(a.num('memory'))} free), which holds {seconds:g} s of "
                f"stream at {rate / MiB:.0f} MiB/s; 5 s would need more memory there")
    return (f"Give the receiver a buffer of at least {seconds:g} s of stream: "
            f"{rate * seconds / MiB:.0f} MiB at {rate / MiB:.0f} MiB/s (set "
            f"{BUFFER} to {size_arg(a.count('size'))} on {PAGE})")


def advice(a: Advice) -> str:
    """One thing to do, naming the wizard's controls."""
    k = AdviceKind
    match a.kind:
        case k.RAISE_RATE_LIMIT:
            return (f"Raise or clear the {RATE_LIMIT} (now {size_arg(a.count('rate_limit'))}) "
                    f"on {PAGE} to go faster")
        case k.RECEIVE_BUFFER:
            return _receive_buffer(a)
        case k.RECEIVE_STALLS:
            return (f"The receiver's buffer ({format_size(a.num('buffer'))}) already holds "
                    f"{a.num('seconds'):.0f} s of stream: the destination pool itself stalls")
        case k.RECEIVE_TXG:
            return ("The destination's zfs receive reads one transaction group at a time; a "
                    "large buffer on the receiver keeps the network flowing in between (a bigger "
                    "buffer on the sender helps much less)")
        case k.USE_TCP:
            return f"Choose {TCP} instead of {SSH} on {PAGE} ({CLEARTEXT})"
        case k.TLS_SPARED:
            return (f"On a network you trust, {TCP} on {PAGE} carries the stream without the TLS "
                    f"ends and their CPU ({CLEARTEXT})")
        case k.TLS_CPU:
            return (f"{plain_words.TLS_CPU_WORDS}; on a network you trust, {TCP} on {PAGE} "
                    f"spares that CPU ({CLEARTEXT})")
        case k.USE_TCP_IF_SSH:
            return f"If the transport is {SSH}: choose {TCP} on {PAGE} instead ({CLEARTEXT})"
        case k.TRY_CIPHER:
            cipher = a.word("cipher")
            return f"Try cipher {cipher}: {_ciphers(cipher)}"
        case k.FASTER_CIPHER:
            cipher = a.word("cipher")
            return (f"Over SSH, cipher {cipher} carries {format_rate(a.num('rate'))} against "
                    f"{format_rate(a.num('default_rate'))} for the default: {_ciphers(cipher)}")
        case k.TCP_FASTER:
            tcp, ssh = a.num("tcp_rate"), a.num("ssh_rate")
            return (f"{TCP} carries {format_rate(tcp)}, {tcp / ssh:.1f}x SSH: choose {TCP} "
                    f"instead of {SSH} on {PAGE} where the network is trusted")
        case k.SSH_SLOW:
            return (f"SSH carries {format_rate(a.num('rate'))}: choose {TCP} instead of {SSH} "
                    f"on {PAGE} on trusted networks")
        case k.SSH_UNREACHABLE:
            return (f"The source cannot ssh to the destination: {a.word('reason')} (only "
                    f"{SSH} needs it)")
        case k.COMPRESS_ON:
            return (f"{plain_words.compress_gain(a)}: choose {a.word('tool')} under "
                    f"\"{COMPRESS}\" on {PAGE}")
        case k.COMPRESS_OFF:
            return (f"{plain_words.compress_gain(a)}, no faster than without it "
                    f"({format_rate(a.num('current'))}): leave \"{COMPRESS}\" at none")
        case k.COMPRESS_LIGHTER:
            return (f"The compressor ({a.word('tool')}) cannot keep up with the stream: choose "
                    f"lz4 (faster, less gain) or none under \"{COMPRESS}\" on {PAGE}")
        case k.RELAY_BYPASS:
            return f"If the hosts reach each other, {TCP} (or {SSH}) on {PAGE} skips this computer"
        case k.RUN_DOCTOR:
            return f"Measure each stage alone: {DOCTOR} on {PAGE}"
        case k.SOURCE_READ:
            return (f"The source reads at about {format_rate(a.num('rate'))}: time "
                    "`zfs send SNAPSHOT > /dev/null` (or through `mbuffer -o /dev/null`) on the "
                    f"source, or run {DOCTOR} on {PAGE}; if it is no faster, the pool is the "
                    "limit")
        case k.WRITE_TEST:
            return (f"Measure its write speed alone: {DOCTOR} on {PAGE} with \"{WRITE_TEST}\", "
                    f"or {DD}")
        case k.STALL_WAIT:
            if a.num("timeout"):
                return (f"The transfer gives up after {plain_words.duration(a.num('timeout'))} "
                        f"without a byte (\"{STALLS}\" on {PAGE}); it goes on by itself if bytes "
                        "move before")
            return ("The transfer goes on by itself when bytes move again; Stop ends it, and "
                    f"\"{STALLS}\" on {PAGE} can make it give up by itself")
        case (k.CIPHER_CPU_BOUND | k.RELAY_PATH | k.RELAY_NEARBY | k.NETWORK_LINK | k.JUMBO_FRAMES |
                k.NIC_RINGS | k.TRANSPORT_CPU | k.SOURCE_DISKS | k.SOURCE_POOL | k.SOURCE_QUIET |
                k.DESTINATION_SLOW | k.DESTINATION_VDEVS | k.DESTINATION_POOL | k.CPU_BOUND |
                k.CLEANUP_FAILED | k.LEFTOVER_DATASET | k.LINK_SLOWER | k.HALF_DUPLEX |
                k.MTU_MISMATCH | k.RINGS_BELOW_MAX | k.HOST_SHAPING | k.CPU_SCALED | k.WIRE_FULL |
                k.LOSSY_LINK | k.FREE_CPU):
            return plain_words.advice(a)
        case _:
            assert_never(a.kind)


def note(n: Note) -> str:
    """A note on one doctor stage."""
    k = NoteKind
    match n.kind:
        case k.NEEDS_SNAPSHOT:
            return f"Choose a snapshot on {SOURCE_PAGE} to time it"
        case k.WRITE_SYNC:
            return f"From /dev/urandom, including {n.num('seconds'):.1f} s of sync"
        case k.LEFT_OUT:
            return "Not run: “Also test writing on the destination” is off"
        case k.NO_ROOM:
            return (f"Only {format_size(n.num('free'))} free under {n.word('parent')}: the test "
                    f"writes at most {n.num('share'):.0%} of it and needs "
                    f"{format_size(n.num('minimum'))}")
        case (k.RAN_TO_END | k.FROM_CACHE | k.SSH_UNREACHABLE | k.NO_POOL | k.WRITE_LIMIT
              | k.COMPRESS_SAMPLE | k.NO_COMPRESSOR | k.RESENT | k.IFACE_LOSS):
            return plain_words.note(n)
        case _:
            assert_never(n.kind)


# -- the Hosts page -----------------------------------------------------------------------------
def overwrite_choice(e: Emptiness) -> str:
    """The Destination page's checkbox for a dataset the engine judged not empty (or could
    not tell): what ticking it loses."""
    return (f"Replace the contents of {e.dataset} ({plain_words.contents(e)}) with the copy; "
            "what it holds is lost")


def replaced(e: Emptiness) -> str:
    """The plan's note on the dataset whose whole content the copy replaces."""
    if e.empty:
        return f"{e.dataset} was checked and is empty: the copy is received into it as itself."
    return (f"The whole content of {e.dataset} is replaced by the copy, without a snapshot "
            f"of it. Lost: {plain_words.contents(e)}.")


def first_run_html(tried: Sequence[str], agent: bool, found: Sequence[str]) -> str:
    """The Hosts page when nothing is known yet (no ~/.ssh/config host, no recent one): what to
    type, that This computer is there, and where keys come from.

    Args:
        tried: the default key files' names in ~/.ssh, as the login tries them.
        agent: an SSH agent runs (SSH_AUTH_SOCK is set).
        found: the names in `tried` that exist.
    """
    where = ("<b>Where:</b> type <code>user@host</code> or <code>user@host:port</code> as the "
             "Host, or an alias from ~/.ssh/config. <b>This computer</b> is first in the list, "
             "for pools on this machine.")
    keys = f"{', '.join(tried[:-1])} or {tried[-1]}" if len(tried) > 1 else "".join(tried)
    login = f"<b>Log in:</b> your SSH agent and ~/.ssh/{markup.escape(keys)} are tried first"
    here = (["the agent"] if agent else []) + list(found)
    if here:
        login += (f" (here: {markup.escape(', '.join(here))}). Another key: <i>{KEY_FILE}</i> "
                  f"under <i>{LOG_IN_WITH}</i>.")
    else:
        login += (f"; none is here yet: choose <i>{KEY_FILE}</i> or <i>{PASSWORD}</i> under "
                  f"<i>{LOG_IN_WITH}</i>.")
    return f"{where}<br>{login} A password is asked once per session and never stored."


# -- rich text ----------------------------------------------------------------------------------
def items_html(items: Iterable[str]) -> str:
    """Sentences as a bulleted list (each escaped); "" for none."""
    rows = "".join(f"<li>{markup.escape(i)}</li>" for i in items)
    return f"<ul style='margin-left:-20px'>{rows}</ul>" if rows else ""


def verdict_html(verdict: Verdict) -> str:
    """A bottleneck verdict for a banner: the headline in bold with its confidence, then the
    advice as a list."""
    text = f"<b>{markup.escape(finding(verdict.finding))}</b>"
    if verdict.confidence > 0:
        text += f" <span style='color:#6b7280'>(confidence {verdict.confidence:.0%})</span>"
    return text + items_html(advice(a) for a in verdict.advice)


def bottleneck(kind: Bottleneck) -> str:
    """What holds a transfer back, in a few words (a table cell)."""
    b = Bottleneck
    match kind:
        case b.SOURCE:
            return "The source pool (zfs send)"
        case b.NETWORK:
            return "The network"
        case b.DESTINATION:
            return "The destination pool (zfs receive)"
        case b.BURSTY_RECEIVE:
            return "Bursty zfs receive"
        case b.RATE_LIMITED:
            return f"The {RATE_LIMIT} you set"
        case b.STALLED:
            return "Stalled: no byte moved"
        case b.COMPRESSOR:
            return "The compressor (before the wire)"
        case b.NONE:
            return "No clear bottleneck"
        case _:
            assert_never(kind)


def stored_bottleneck(job: JobRecord) -> str | None:
    """A recorded job's bottleneck in a few words, if its verdict is data this version reads."""
    verdict = Verdict.from_json(job.verdict_data)
    return verdict_bottleneck(verdict) if verdict is not None else None


def verdict_bottleneck(verdict: Verdict) -> str:
    """What held a judged transfer back, in a few words: its stage, or the end of the way
    between the buffers whose CPU did."""
    f = verdict.finding
    if f.kind is FindingKind.END_CPU:
        return f"The CPU of {f.word('program')} on {f.word('host')}"
    return bottleneck(verdict.kind)


def stored_verdict(job: JobRecord) -> str | None:
    """A recorded job's verdict headline: worded here from its data, else the text an older
    record kept."""
    verdict = Verdict.from_json(job.verdict_data)
    return finding(verdict.finding) if verdict is not None else job.verdict_text


def error_html(exc: BaseException, fix: str | None = None) -> str:
    """An error as the wizard shows it (markup.error_html), its fix in the wizard's words
    (`refusal_fix`, `error_fix`) unless `fix` is given."""
    if fix is None and isinstance(exc, ZmigrateError):
        fix = refusal_fix(exc) if isinstance(exc, PreflightError) else error_fix(exc)
    return markup.error_html(exc, fix)


def error_fix(exc: ZmigrateError) -> str | None:
    """An error's fix: its words for every face, then its remedies in the wizard's."""
    fix = fix_words(exc.said_fix, exc.remedies, exc.figures, remedy)
    return _capital(fix) if fix else None


def caveat(w: PlanWarning) -> str:
    """A plan's warning, its ways out naming the wizard's controls."""
    return caveat_words(w, remedy)


def remedy(r: Remedy, f: Mapping[str, str]) -> str:
    """One way out, naming the wizard's controls ("" where the wizard offers none)."""
    match r:
        case Remedy.ROLL_BACK:
            return ("the destination was changed after its last snapshot: undo that there "
                    "(zfs rollback to its last snapshot, which loses the change) and send again")
        case Remedy.DAMAGED:
            return (f"run it again; if it recurs, check the link, or choose {PRIVATE} or {SSH} "
                    f"on {PAGE}: their MAC catches damage in flight")
        case Remedy.UNREACHABLE:
            return ("the two hosts may not reach each other (another network, NAT, a "
                    f"firewall): choose {RELAY} or {SSH} on {PAGE}")
        case Remedy.PORT_IN_USE:
            return f"give another {PORT} on {PAGE}, or 0 to pick a free one"
        case Remedy.PORT_HELD:
            return (f"find out why that process listens on port {f.get('port', 'it')} (it may "
                    "be waiting for a stream that is not its own); stop it, or give another "
                    f"{PORT} on {PAGE}")
        case Remedy.ALLOW_ADDRESS:
            address = f.get('address', 'that address')
            return (f"if {address} is the source as the destination sees it (NAT, a second "
                    f"network), give it in \"{ALLOW_ADDRESS}\" on {PAGE}, or choose {PRIVATE}: "
                    "it proves the source by a key made for this job, not by its address")
        case Remedy.OPEN_LISTENER:
            return (f"give the source's address in \"{ALLOW_ADDRESS}\" on {PAGE}, or choose "
                    f"{PRIVATE}: its listener takes only the holder of a key made for this job")
        case Remedy.RELAY:
            return f"if it cannot, choose {RELAY} on {PAGE}"
        case Remedy.USE_RELAY:
            return f"or choose {RELAY} on {PAGE} (the stream then goes through this computer)"
        case Remedy.SSH_OPTION:
            return ""  # the wizard's ssh takes the source's own configuration, no options
        case Remedy.COMPRESS_ALWAYS:
            return ""  # the wizard does not offer to compress such a stream anyway
        case Remedy.CHECK_NAME:
            return ("reload the datasets (Reload on the Source or Destination page) and pick "
                    "it again: it may be gone")
        case Remedy.RESUME:
            return ("the interrupted receive was kept on the destination: send again, and the "
                    "Destination page offers to resume it (only the rest is sent) or to "
                    "discard it")
        case Remedy.LEAVE_WRITES:
            return (f"go back with \"{LEAVE_WRITES}\": the writes stay on the copy under a "
                    "snapshot, to bring over by hand")
        case Remedy.FINAL_SYNC_FIRST:
            return (f"run the final sync first ({FINAL_SYNC} on the Done page): it makes the "
                    "source read-only and copies its last changes")
        case Remedy.GO_BACK_FIRST:
            return f"go back first ({GO_BACK} on the Done page), or leave it live"
        case Remedy.NAME_KEY:
            return (f"choose {KEY_FILE} in \"{LOG_IN_WITH}\" on the Hosts page and name the key, "
                    "or name it in ~/.ssh/config (IdentityFile), add one to the agent (ssh-add), "
                    f"or choose {PASSWORD}")
        case Remedy.LOCAL_RUNNER:
            return f"choose \"{THIS_COMPUTER}\" to run the job here"
        case Remedy.FINISH_GO_LIVE:
            return (f"then {GO_LIVE} again finishes it, or {GO_BACK} undoes exactly what ran (the "
                    "history holds it)")
        case Remedy.GO_BACK_AGAIN:
            return (f"then {GO_BACK} again: it continues where it stopped (the history holds what "
                    "is still to undo)")
        case Remedy.COPY_GONE:
            copy = f.get("copy", "the copy")
            return (f"if it was renamed, rename it back to {copy} and press {GO_BACK} again; if "
                    f"it is gone for good, {GO_BACK} offers to go back without it: the source's "
                    "own steps are undone, and what was written to the copy while live is lost "
                    "with it")
        case Remedy.THIN_VOLUME:
            return ("make room there, or send from the command line with -x refreservation, "
                    "which receives the volume thin")
        case _:
            assert_never(r)


def refusal_fix(exc: PreflightError, *, mount_root: bool = False) -> str:
    """A refusal's fix in the wizard's words, from its kind and figures (the engine's `fix`
    names the command line's flags). `mount_root`: the Destination page's "Mounted under" is
    chosen (a tree's mount collision then names that choice)."""
    f = exc.figures
    match exc.reason:
        case PreflightReason.OTHER:
            return error_fix(exc) or "Nothing was changed; check the hosts and try again"
        case PreflightReason.POOL_ROOT | PreflightReason.NOT_EMPTY:
            name = f.get("dataset", "it")
            # A volume has no children to receive below, and no files to empty.
            text = ("pick another name" if f.get("volume") else
                    f"receive below it (e.g. {f.get('below', name + '/NAME')}), pick another "
                    "name or empty it first")
            text = (text
                    + (f", mount it (zfs mount {name}) so its files can be listed"
                       if f.get("unmounted") else "")
                    + (f", or allow replacing the whole content of {name} below (what it "
                       "holds is lost)" if f.get("force") else ""))
            return _capital(text)
        case PreflightReason.MISSING_TOOL:
            return _missing_tool(f)
        case PreflightReason.NO_SOURCE:
            return "Reload the source's datasets, or pick another snapshot"
        case PreflightReason.NO_PARENT:
            return (f"Create it first: zfs create -p {f['parent']}" if "parent" in f
                    else "Create the destination's parent first, or pick another")
        case PreflightReason.PARTIAL_RECEIVE:
            return ("Resume the interrupted transfer (only the rest is sent), or discard it and "
                    "send again: the Destination page offers both")
        case PreflightReason.PARTIAL_MISMATCH:
            return (f"Resume it by sending {f['toname']}, or discard it and send again"
                    if "toname" in f else "Go back to the Destination page: it reads the "
                    "interrupted transfer again")
        case PreflightReason.STALE_TOKEN:
            return (f"Discard the interrupted transfer (zfs receive -A "
                    f"{f.get('dataset', 'DATASET')}) and send again")
        case PreflightReason.ALREADY_THERE:
            return "Take a new snapshot on the Source page and send that"
        case PreflightReason.BASE_MISSING:
            return "Send from the newest snapshot both hold, or in full"
        case PreflightReason.NO_COMMON_SNAPSHOT:
            return "Choose another name: zmigrate never destroys an unrelated dataset"
        case PreflightReason.DIVERGED:
            return (f"Allow the rollback to @{f['base']} on the Destination page (this "
                    f"destroys {f.get('newer', 'the newer snapshots')}), or choose another name"
                    if "base" in f else "Allow the rollback on the Destination page, or "
                    "choose another name")
        case PreflightReason.UNSUPPORTED:
            return _unsupported(f)
        case PreflightReason.KEY_NOT_LOADED:
            return (f"Load its key on the source (zfs load-key {f.get('dataset', 'DATASET')}), "
                    "or send it raw: the copy stays encrypted")
        case PreflightReason.NO_ADDRESS:
            return (f"Give the address the source reaches the destination at in "
                    f"\"{CONNECT_ADDRESS}\" on {PAGE}, or choose {RELAY} or {SSH}: neither "
                    "needs one")
        case PreflightReason.NO_PORT:
            return (f"Port {f['port']} is in use there: give another on the Transport page, or "
                    "none to pick a free one" if "port" in f
                    else "Give a free port on the Transport page")
        case PreflightReason.NO_SPACE:
            return "Free space on the destination, or pick another pool"
        case PreflightReason.PERMISSION:
            return (f"Grant them (as root there): {f['allow']}; or connect as root or with sudo"
                    if "allow" in f else "Connect as root or with sudo, or grant the "
                    "permissions with zfs allow")
        case PreflightReason.MOUNT_COLLISION:
            return _mount_collision(f, mount_root)
        case PreflightReason.BUSY:
            return (f"Wait for the other run to finish, or stop it there: {f['stop']}"
                    if "stop" in f else "Wait for the other run to finish")
        case PreflightReason.CHANGED:
            return ("Nothing was destroyed: go back to Review, see what the plan destroys now, "
                    "and agree to it there")
        case _:
            assert_never(exc.reason)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _missing_tool(f: Mapping[str, str]) -> str:
    if "install" in f:
        text = _capital(f["install"])
    elif f.get("tool") == "zfs":
        text = "Install ZFS there, or check PATH for non-login shells"
    else:
        text = f"Install {f.get('tool', 'the missing tool')} there"
    instead = {"transport": "; or choose another transport on the Transport page",
               "no_compression": "; or send without compression"}.get(f.get("instead", ""), "")
    return text + instead


def _unsupported(f: dict[str, str]) -> str:
    match f.get("feature"):
        case "raw":
            return ("Upgrade that host to OpenZFS 0.8 or newer: an encrypted dataset goes raw "
                    "(zfs send -w) to stay encrypted")
        case "receive_properties":
            return "Set the properties after the transfer with zfs set"
        case "bookmark":
            return "Send without bookmarking the snapshot"
        case "send_flag":
            return f"Both hosts must support zfs send {f.get('flag', '')}: send without it"
    return "Upgrade that host's ZFS, or send without that option"


def _mount_collision(f: dict[str, str], mount_root: bool) -> str:
    match f.get("way"):
        case "golive":
            return ("Go live under a folder of your choice where nothing is mounted (Under "
                    "another folder…), or free those paths on the destination; nothing was "
                    "changed")
        case "golive_one_machine":
            return (f"{f.get('source', 'The source')} is this same machine under another "
                    "name: pick the same host for both sides so going live swaps the copy in "
                    "place of the source, or go live under another folder (Under another "
                    "folder…); nothing was changed")
        case "carried":
            return (f"{f.get('dataset', 'The source')}'s own mountpoint is set on it and "
                    "travels with the copy, which this destination's zfs mounts as it arrives: "
                    "send it to a pool on another host, or to one with OpenZFS, which "
                    "receives unmounted")
        case "dataset":
            return ("Pick a destination whose copy mounts on a free path"
                    + (", or receive it unmounted" if f.get("unmounted") else ""))
    return MOUNT_COLLISION_ROOT_FIX if mount_root or f.get("way") == "tree_root" \
        else MOUNT_COLLISION_FIX


def transfer_ended(snapshot: str | None, summary: Summary | None, cancelled: bool,
                   error: ZmigrateError | None) -> tuple[str, str, bool]:
    """A notification's title and body for the window's transfer of `snapshot` that ended,
    and whether it went well."""
    what = snapshot or "the transfer"
    if summary is not None and summary.verified:
        return ("Transfer complete", f"{what}: {format_size(summary.bytes)} at "
                f"{format_size(summary.rate)}/s, verified", True)
    if summary is not None:
        return "Transfer not verified", f"{what}: the copy could not be verified", False
    if cancelled:
        return "Transfer stopped", f"{what} was stopped", False
    why = error.message if error is not None else "no reason given"
    return "Transfer failed", f"{what}: {why}", False


def job_ended(s: Status) -> tuple[str, str, bool]:
    """A notification's title and body for a runner's job that ended unwatched, and whether
    it went well."""
    if s.state is JobState.FINISHED:
        return ("Transfer complete", f"{s.what}: {format_size(s.done)}, verified (it ended "
                "while zmigrate was closed)", True)
    if s.state is JobState.STOPPED:
        return "Transfer stopped", f"{s.what} was stopped", False
    if s.state is JobState.RUNNER_DIED:
        return ("Transfer's runner died", f"{s.what}: its runner is gone without an outcome; "
                "the first page shows it", False)
    why = s.outcome.message if s.outcome is not None and s.outcome.message else "no reason given"
    return "Transfer failed", f"{s.what}: {why}", False


def room(r: Room) -> str:
    """A tree's copy that will not fit, with the ways out the wizard has (it has no control for
    leaving a property out: the command line's -x is named as such)."""
    return (f"{r.shortfall()}. Make room there, untick datasets on the Source page, or send "
            "from the command line with -x refreservation, which receives thick volumes thin.")
