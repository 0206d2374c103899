"""The sentences both faces say alike: findings, advice and doctor notes that name no control of
the wizard and no flag of the command line (a command to run on a host, a figure, a cause).

`cli/words.py` and `gui/words.py` word the other kinds for their users and hand these kinds
here, so one sentence is written once.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from .destination import Emptiness
from .events import EndCpu, OutOfTouch, Resent
from .findings import Advice, AdviceKind, Finding, FindingKind, Note, NoteKind
from .losses import DESTINATION, HIDING, SOURCE, Loss, LossKind
from .readings import iface_loss
from .readings.tcp_resent import LOSSY, SAID_FROM, Segments
from .transports import Carrier, Transport, carrier
from .units import format_rate, format_size
from .wire import WIRE_SHARE, Ceiling, LinkReading

# How to time a pool's writes by hand (compression would flatter zeros).
DD = "`dd if=/dev/zero bs=1M count=10240 | mbuffer -o /POOL/benchfile` with compression off"


def pct(value: float) -> str:
    """A buffer fill as mbuffer prints it: whole percents."""
    return f"{value:.0f}%"


def finding(f: Finding) -> str:
    """A finding of a kind both faces word alike; ValueError for a kind each face words itself."""
    k = FindingKind
    match f.kind:
        case (k.RECEIVE_SWINGS | k.RECEIVE_FULL | k.RECEIVE_FILLING | k.RECEIVE_DRAINING |
                k.RECEIVE_STARVED | k.SEND_FULL | k.BOTH_EMPTY):
            return _buffers(f)
        case k.NOT_ENOUGH_DATA:
            return "Not enough data yet"
        case k.TOO_SHORT:
            return "The transfer was too short to judge"
        case k.BUFFER_EMPTY:
            return (f"The buffer is {pct(f.num('fill'))} full on average: zfs send is the "
                    f"slowest stage at {format_rate(f.num('rate'))}")
        case k.BUFFER_BALANCED:
            return (f"The buffer is {pct(f.num('fill'))} full on average: send and receive "
                    "keep about the same pace")
        case k.COMPRESSOR_SLOW:
            return (f"Both buffers run near empty while the stream is compressed with "
                    f"{f.word('tool')}: the stage before the wire - the compressor, or zfs send "
                    f"before it - is the slowest at {format_rate(f.num('rate'))}")
        case k.RECEIVER_WAITS:
            return ("The receiver waits for data; without the sender's figures the source and "
                    "the network cannot be told apart")
        case k.BALANCED:
            return ("No stage clearly holds the transfer back: the buffers are part full on "
                    "both ends")
        case k.STALLED:
            return (f"Stalled: no byte has moved for {duration(f.num('seconds'))}; "
                    f"{stall_place(f)}")
        case k.AT_THE_WIRE:
            if "compressed" in f.figures:
                return (f"The wire carries the {f.word('compressed')}-compressed stream at "
                        f"{wire_share(f)}: the wire is the limit")
            return f"The stream runs at {wire_share(f)}: the wire is the limit"
        case k.STALL_CLEARED:
            return (f"The stream moves again after {duration(f.num('seconds'))} without a byte "
                    f"({stall_short(f)})")
        case k.END_CPU:
            return (f"CPU, not the link, holds the stream to {format_rate(f.num('rate'))}: "
                    f"{f.word('program')} on {f.word('host')} {_on_cpu(f)}")
        case _:
            raise ValueError(f"{f.kind} is worded by each face")


def _buffers(f: Finding) -> str:
    """A finding read from the two buffers' fill: what each says of the stages around it."""
    k = FindingKind
    match f.kind:
        case k.RECEIVE_SWINGS:
            return ("The destination's zfs receive takes data in bursts: the receiver's buffer "
                    f"swings between full ({f.num('full_share'):.0%} of the time) and empty "
                    f"({f.num('empty_share'):.0%})")
        case k.RECEIVE_FULL:
            return (f"The receiver's buffer is {pct(f.num('fill'))} full on average: zfs "
                    "receive on the destination is the slowest stage at "
                    f"{format_rate(f.num('rate'))}")
        case k.RECEIVE_FILLING:
            return (f"The receiver's buffer fills up (from {pct(f.num('fill_min'))} to "
                    f"{pct(f.num('fill_max'))}): zfs receive on the destination takes less than "
                    f"arrives, about {format_rate(f.num('rate'))}")
        case k.RECEIVE_DRAINING:
            return (f"The receiver's buffer holds a backlog (up to {pct(f.num('fill_max'))}) "
                    "that zfs receive on the destination drains after the stream has arrived, "
                    f"at about {format_rate(f.num('rate'))}")
        case k.RECEIVE_STARVED:
            return (f"The receiver's buffer ran empty {f.count('empties')} times while zfs "
                    f"receive drains in bursts (out up to {format_rate(f.num('out_peak'))}, "
                    f"fed at {format_rate(f.num('in_rate'))})")
        case k.SEND_FULL:
            where = ("the receiver's is near empty" if f.has("receive_fill")
                     else "there are no figures from the receiver")
            via = link_carrier(f.word("transport")).link_words
            return (f"The sender's buffer is {pct(f.num('fill'))} full and {where}: "
                    f"{via} carries only {format_rate(f.num('rate'))}")
        case k.BOTH_EMPTY:
            receive = (f", receiver {pct(f.num('receive_fill'))}" if f.has("receive_fill")
                       else "")
            return (f"Both buffers are near empty (sender {pct(f.num('send_fill'))}{receive}): "
                    f"zfs send on the source is the slowest stage at {format_rate(f.num('rate'))}")
        case _:
            raise ValueError(f"{f.kind} is not the buffers'")


def _on_cpu(f: Finding) -> str:
    """What an end held by CPU got of it: a core of its own, or a turn it waits for."""
    on, waiting = 100 * f.num("on_cpu"), 100 * f.num("waiting")
    if waiting > on:
        return (f"waits for a CPU {pct(waiting)} of the time and runs {pct(on)} — other work "
                "there, or a CPU limit such as a container's, takes its CPU")
    also = f" (and waits for one {pct(waiting)} of the time)" if waiting >= 10 else ""
    return f"keeps {pct(on)} of a core busy{also}, and that core's speed sets the pace"


def resent_now(r: Resent) -> str | None:
    """`lab-src sent 2.3% of its TCP segments again`, over the last reading; None where it
    sent too few to say (under SAID_FROM)."""
    if r.sent < SAID_FROM:
        return None
    return f"{r.host} sent {Segments(r.sent, r.again).share:.1%} of its TCP segments again"


def end_cpu_now(e: EndCpu) -> str:
    """`socat on lab-dst: 80% of a CPU, 15% waiting for one`, over the last reading."""
    waiting = f", {pct(100 * e.waiting)} waiting for one" if e.waiting >= 0.05 else ""
    return f"{e.program} on {e.host}: {pct(100 * e.on_cpu)} of a CPU{waiting}"


def first_few(items: Sequence[str], few: int = 3) -> str:
    """The first `few` items joined by "; ", and how many more there are: a pool's hundreds of
    datasets make no readable message."""
    more = f" (and {len(items) - few} more)" if len(items) > few else ""
    return "; ".join(items[:few]) + more


def duration(seconds: float) -> str:
    """`35 s`, `2 min 05 s`, `1 h 02 min`."""
    s = round(seconds)
    if s < 120:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def stall_path(f: Finding) -> str:
    """The way between the hosts as its transport names it (the carrier's figures)."""
    return link_carrier(f.word("path") if f.has("path") else "").stalled_words(f)


def link_carrier(name: str) -> Carrier:
    """The carrier a finding's figure names (`path`, `transport`); the plain words of any
    carrier for none, or for a name this version does not know (a newer one's, in the
    history)."""
    try:
        return carrier(Transport(name))
    except ValueError:
        return Carrier()


def _held(f: Finding) -> str:
    """What a look at the host found: the process state, the pool's health."""
    notes = []
    if f.has("state") and f.word("state") == "stopped":
        notes.append("its process is stopped (state T: it was sent SIGSTOP; "
                     f"`kill -CONT` on {f.word('host')} lets it go on)")
    elif f.has("state") and f.word("state") == "disk":
        notes.append("its process waits on the pool's disks (state D)")
    if f.has("pool_health") and f.word("pool_health") not in ("", "ONLINE"):
        notes.append(f"the pool is {f.word('pool_health')}: `zpool status` on "
                     f"{f.word('host')} says why")
    return "; " + "; ".join(notes) if notes else ""


def stall_place(f: Finding) -> str:
    """Where a stalled stream stopped, and what says so."""
    where, host = f.word("where"), f.word("host")
    fill = pct(f.num("fill")) if f.has("fill") else ""
    match where:
        case "path":
            held = f"the send buffer holds {fill} and " if fill else ""
            return held + stall_path(f)
        case "destination":
            held = (f"the receive buffer on {host} holds {fill} and zfs receive takes none"
                    if fill else f"zfs receive on {host} takes nothing")
            return f"{held} — the destination pool or zfs receive{_held(f)}"
        case "source":
            return (f"nothing leaves zfs send on {host} and both buffers are empty — the "
                    f"source pool{_held(f)}")
        case "host":
            answers = ""
            if f.has("answers"):
                answers = ("; it does not answer on its SSH session" if not f.num("answers")
                           else "; it still answers on its SSH session")
            return (f"no status has come from {host} — that host or its SSH "
                    f"session{answers}")
        case _:
            return f"no status has come from either host ({host}) — this computer's link to them"


def stall_short(f: Finding) -> str:
    """Where a stall was, in a few words."""
    where, host = f.word("where"), f.word("host")
    match where:
        case "path":
            return "the way between the hosts"
        case "destination":
            return f"zfs receive on {host}"
        case "source":
            return f"zfs send on {host}"
        case "host":
            return host
        case _:
            return "this computer's link to both hosts"


def compress_gain(a: Advice) -> str:
    """The doctor's compression figures: `zstd: 1.9x smaller, 180 MiB/s on zb-src's CPU: the
    link's 47 MiB/s becomes ~89 MiB/s` (the link's part where the link was measured)."""
    text = (f"Compressing with {a.word('tool')}: {a.num('ratio'):.1f}x smaller, "
            f"{format_rate(a.num('rate'))} on {a.word('host')}'s CPU")
    if a.num("link"):
        return (text + f": the link's {format_rate(a.num('link'))} becomes "
                f"~{format_rate(a.num('predicted'))}")
    return text + f": the transfer would go at ~{format_rate(a.num('predicted'))}"


def link_speed(bits: float) -> str:
    """A line rate as links are named: `100 Mb/s`, `1 Gb/s`, `2.5 Gb/s`, `400 Mb/s`."""
    if bits >= 1e9:
        return f"{bits / 1e9:.3g} Gb/s"
    if bits >= 1e6:
        return f"{bits / 1e6:.3g} Mb/s"
    return f"{bits / 1e3:.3g} kb/s"


def wire_share(f: Finding | Advice) -> str:
    """`112 MiB/s, 95 % of the 1 Gb/s link` (or `of the 400 Mb/s shaping on HOST`)."""
    what = (f"the {link_speed(f.num('bits'))} link" if f.word("limit") == "link"
            else f"the {link_speed(f.num('bits'))} shaping on {f.word('host')}")
    return f"{format_rate(f.num('rate'))}, {f.num('share'):.0%} of {what}"


def _unknown(what: str, r: LinkReading, tool: str) -> str:
    return f"{what} unknown" + (f" (no {tool})" if tool in r.missing else "")


def link_brief(r: LinkReading) -> str:
    """A host's link in a few words: `eth0 1 Gb/s, MTU 1500` (`lo, same machine`)."""
    if r.iface is None:
        return "link unknown"
    if r.local:
        return f"{r.iface}, same machine"
    speed = link_speed(r.speed * 1e6) if r.speed else (r.virtual or "speed unknown")
    return f"{r.iface} {speed}, MTU {r.mtu or '?'}"


def link_detail(r: LinkReading) -> str:
    """A host's side of the path: interface, speed and duplex, MTU, path MTU, rings,
    shaping, CPU clock; what could not be read says "unknown" and why."""
    if r.iface is None:
        return f"no route to {r.peer} read" if r.peer else "not read"
    if r.local:
        return f"{r.iface}: the same machine as its peer, no wire between"
    parts = [r.iface]
    if r.speed:
        parts.append(link_speed(r.speed * 1e6) + (f" {r.duplex} duplex" if r.duplex else ""))
    else:
        parts.append(f"speed unknown ({r.virtual} has none)" if r.virtual
                     else _unknown("speed", r, "ethtool"))
    parts.append(f"MTU {r.mtu}" if r.mtu else "MTU unknown")
    parts.append(f"path MTU {r.path_mtu}" if r.path_mtu else _unknown("path MTU", r, "ping"))
    rings = r.rings
    if rings is not None and rings.rx is not None:
        parts.append(f"rings rx {rings.rx}/{rings.rx_max or '?'} tx {rings.tx or '?'}/"
                     f"{rings.tx_max or '?'}")
    elif r.linux:
        parts.append(_unknown("rings", r, "ethtool"))
    if r.shaping:
        parts.append(f"shaped to {link_speed(r.shaping)}")
    elif "tc" not in r.missing and r.linux:
        parts.append("no shaping")
    if r.cpu_mhz and r.cpu_max_mhz:
        parts.append(f"CPU {r.cpu_mhz}/{r.cpu_max_mhz} MHz")
    return ", ".join(parts)


def ceiling_words(c: Ceiling | None) -> str:
    """`98.9 MiB/s (the 1 Gb/s link of backup-01's em0, MTU 1500)`, or why it is unknown."""
    if c is None:
        return "unknown (no link speed or shaping read on either host)"
    what = "link" if c.limit == "link" else "shaping"
    return (f"{format_rate(c.rate)} (the {link_speed(c.bits)} {what} of {c.host}'s {c.iface}, "
            f"MTU {c.mtu})")


def ceiling_short(c: Ceiling) -> str:
    """`113 MiB/s, the 1 Gb/s link` (`46 MiB/s, the 400 Mb/s shaping on lab-src`)."""
    what = "link" if c.limit == "link" else f"shaping on {c.host}"
    return f"{format_rate(c.rate)}, the {link_speed(c.bits)} {what}"


def live_share(rate: float, c: Ceiling, wire_rate: float | None = None) -> str:
    """A live rate against the ceiling: `95% of the 1 Gb/s link: the wire is the limit`; with
    the stream compressed in transit, what the wire carries (`wire_rate`) is what fills it:
    `the wire carries 45 MiB/s compressed, 98% of the 400 Mb/s shaping on nas: ...`."""
    share = c.share(rate if wire_rate is None else wire_rate)
    what = "link" if c.limit == "link" else f"shaping on {c.host}"
    limit = ": the wire is the limit" if share >= WIRE_SHARE else ""
    carries = "" if wire_rate is None else \
        f"the wire carries {format_rate(wire_rate)} compressed, "
    return f"{carries}{share:.0%} of the {link_speed(c.bits)} {what}{limit}"


def _wire_advice(a: Advice) -> str:
    """The wire's cures, naming the interface and the host they apply on."""
    k = AdviceKind
    match a.kind:
        case k.LINK_SLOWER:
            other = "destination" if a.word("side") == "source" else "source"
            return (f"On the {a.word('side')} ({a.word('host')}), {a.word('iface')} negotiated "
                    f"{link_speed(a.num('speed') * 1e6)} while the {other}'s port does "
                    f"{link_speed(a.num('other_speed') * 1e6)}: check the cable or the switch "
                    "port")
        case k.HALF_DUPLEX:
            return (f"On the {a.word('side')} ({a.word('host')}), {a.word('iface')} runs half "
                    f"duplex at {link_speed(a.num('speed') * 1e6)}: a duplex mismatch with the "
                    "switch port; set both to auto-negotiate")
        case k.MTU_MISMATCH:
            big, small = a.count("big_mtu"), a.word("small_iface")
            cure = ("for jumbo frames set it on both ends and on the switch" if big > 1500
                    else "set the same MTU on both ends")
            return (f"MTU {big} on the {a.word('big_side')} ({a.word('big_iface')}), "
                    f"{a.count('small_mtu')} on the {a.word('small_side')} ({small}): the path "
                    f"carries {a.count('path_mtu')}; {cure} (ip link set dev {small} mtu {big})")
        case k.RINGS_BELOW_MAX:
            ring, iface = a.word("ring"), a.word("iface")
            return (f"On the {a.word('side')} ({a.word('host')}), {iface}'s {ring} ring holds "
                    f"{a.count('size')} of {a.count('max')}: ethtool -G {iface} {ring} "
                    f"{a.count('max')}")
        case k.HOST_SHAPING:
            iface = a.word("iface")
            return (f"The {a.word('side')} ({a.word('host')}) shapes {iface} to "
                    f"{link_speed(a.num('bits'))} itself (tc qdisc show dev {iface}): the "
                    "transfer goes no faster while that stays")
        case k.CPU_SCALED:
            return (f"The {a.word('side')}'s CPU ({a.word('host')}) runs at "
                    f"{a.count('mhz')} of {a.count('max_mhz')} MHz (frequency scaling): a "
                    "CPU-bound stage runs slower; the performance governor keeps its clock up")
        case k.WIRE_FULL:
            return (f"The network carries {wire_share(a)}: the wire is the limit, only a "
                    "faster link makes the transfer faster")
        case _:
            raise ValueError(f"{a.kind} is not the wire's")


WIRE_KINDS = frozenset({AdviceKind.LINK_SLOWER, AdviceKind.HALF_DUPLEX, AdviceKind.MTU_MISMATCH,
                        AdviceKind.RINGS_BELOW_MAX, AdviceKind.HOST_SHAPING,
                        AdviceKind.CPU_SCALED, AdviceKind.WIRE_FULL})


# The private transport's ends and their CPU (each face says how to choose tcp its own way).
TLS_CPU_WORDS = ("Check the CPU on both hosts: the TLS ends (socat or openssl) encrypt and "
                 "decrypt every byte, so one of them at 100 % of a core, or every core busy (a "
                 "pool that compresses with gzip, say), holds the stream back")


def _iface_loss(f: Note | Advice) -> str:
    """`1,200 frames received bad (CRC or framing), 34 frames missed with its receive ring
    full`: what an interface's counters gave, the largest first."""
    parts = [(f.count("frames"), "frames received bad (CRC or framing)"),
             (f.count("ring"), "frames missed with its receive ring full"),
             (f.count("queue"), "packets dropped by its own queue (tc qdisc)")]
    return ", ".join(f"{n:,} {what}" for n, what in sorted(parts, key=lambda p: -p[0]) if n > 0)


# Each cure as the host that counted the loss takes it: by the tool that read it (ip: Linux,
# netstat: FreeBSD, whose iflib drivers take their ring sizes as loader tunables, iflib(4)).
_IP, _NETSTAT = iface_loss.IP, iface_loss.NETSTAT
_CURES = {("frames", _IP): "check its cable, the switch port, and both ends' duplex",
          ("ring", _IP): "raise its receive ring (ethtool -G {iface} rx MAX, the most "
                          "ethtool -g shows)",
          ("queue", _IP): "its own queue drops what it cannot hold: look for shaping below the "
                           "link's speed, or too short a queue, in tc qdisc show dev {iface}",
          ("frames", _NETSTAT): "check its cable, the switch port, and both ends' duplex (some "
                                 "drivers count a full receive ring as input errors too)",
          ("ring", _NETSTAT): "raise its receive ring (its driver's rx descriptors in "
                               "/boot/loader.conf, dev.DRIVER.UNIT.iflib.override_nrxds for an "
                               "iflib driver, then reboot)",
          ("queue", _NETSTAT): "its own send queue drops what it cannot hold: look for a "
                                "dummynet pipe or ALTQ queue below the link's speed, or too "
                                "short a send queue (net.link.ifqmaxlen)"}


def _where_lost(a: Advice) -> str:
    """Where the reading of both ends' interfaces (iface_loss.where) puts the loss: the end
    that lost most, by its cause; between them where both were read and neither lost enough;
    the counters to look at where they were not read."""
    if a.has("iface"):
        tool = a.word("tool") if a.has("tool") else _IP  # a report from before tools were said
        cure = _CURES[(a.word("cause"), tool)].format(iface=a.word("iface"))
        return f"On {a.word('at')}, {a.word('iface')} counted {_iface_loss(a)}: {cure}"
    if a.has("ifaces_read") and a.num("ifaces_read") >= 2:
        return ("Neither host's interface counted losses that explain it (bad frames, a full "
                "receive ring, its own queue's drops), so the loss is between them: a switch "
                "port, a firewall, or a busy uplink")
    errors = "ip -s link" if a.word("system").startswith("Linux") else "netstat -i"
    return ("Check the cables and switch ports, and the NICs' error and drop counters "
            f"({errors} on {a.word('host')})")


def minute(epoch: float) -> str:
    """A moment in this computer's time, to the minute: `2026-11-29 04:40`."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch))


def advice(a: Advice) -> str:
    """Advice of a kind both faces word alike; ValueError for a kind each face words itself."""
    k = AdviceKind
    if a.kind in WIRE_KINDS:
        return _wire_advice(a)
    match a.kind:
        case k.CIPHER_CPU_BOUND:
            return (f"The cipher is CPU-bound: {a.word('process')} used {a.num('cpu'):.0f}% of "
                    f"a core on {a.word('host')} during \"{a.word('stage')}\"")
        case k.RELAY_PATH:
            return ("The stream goes through this computer, up one SSH session and down the "
                    "other: its link and its CPU (two ciphers) set the pace")
        case k.RELAY_NEARBY:
            return "Run zmigrate on a machine near both hosts (same network, wired)"
        case k.LOSSY_LINK:
            return (f"The link loses packets: {a.word('host')} had to send "
                    f"{a.num('share'):.1%} of its TCP segments again (a sound link stays well "
                    f"under {LOSSY:.0%}), and TCP slows down at each loss. {_where_lost(a)}")
        case k.NETWORK_LINK:
            return (f"TCP between the hosts carries {format_rate(a.num('rate'))}: check the link "
                    "speed (ethtool IFACE)")
        case k.JUMBO_FRAMES:
            return "Jumbo frames: ip link set dev IFACE mtu 9000 on both ends"
        case k.NIC_RINGS:
            return "Larger NIC rings: ethtool -G IFACE rx 2048 tx 2048"
        case k.TRANSPORT_CPU:
            return ("Check the CPU of the transport processes (ssh, mbuffer) and the interrupt "
                    "load: one core at 100 % caps the stream")
        case k.TLS_CPU:
            return TLS_CPU_WORDS + "; on a network you trust, --transport tcp spares that CPU"
        case k.FREE_CPU:
            return (f"Free CPU for {a.word('program')} on {a.word('host')}: `top` there shows what "
                    "else runs; a container or VM with a CPU limit needs a higher one")
        case k.SOURCE_DISKS:
            return ("Check the source disks with `zpool iostat -v 1`: all busy means the pool "
                    "layout is the cap (in the field notes one wide raidz read 95 MB/s, the same "
                    "disks as 4 raidz groups about 170 MB/s)")
        case k.SOURCE_POOL:
            return (f"The source pool reads at {format_rate(a.num('rate'))}: check its disks "
                    "with `zpool iostat -v 1`; a pool of more vdevs reads faster (field notes: "
                    "one wide raidz 95 MB/s, the same disks as 4-6 raidz groups about 170 MB/s)")
        case k.SOURCE_QUIET:
            return "Avoid other reads on the source pool while the transfer runs"
        case k.DESTINATION_SLOW:
            return (f"The destination pool takes only about {format_rate(a.num('rate'))}: "
                    "watch `zpool iostat -v 1` there")
        case k.DESTINATION_VDEVS:
            return ("More vdevs write faster (field notes: one 46-disk mirror set 63 MB/s, raidz "
                    "groups 250-340 MB/s); keep other writes and dedup off that pool during the "
                    "transfer")
        case k.DESTINATION_POOL:
            return (f"The destination pool writes at {format_rate(a.num('rate'))}: check its "
                    "disks with `zpool iostat -v 1`; more vdevs write faster, keep dedup and "
                    "other writes off it during the transfer")
        case k.CPU_BOUND:
            return (f"One process, not the hardware, sets the pace: {a.word('process')} used "
                    f"{a.num('cpu'):.0f}% of a core on {a.word('host')} during "
                    f"\"{a.word('stage')}\"")
        case k.CLEANUP_FAILED:
            dataset = a.word("dataset")
            return (f"The write test's dataset {dataset} is left on {a.word('host')}: "
                    f"destroy it there with zfs destroy -r {dataset}")
        case k.LEFTOVER_DATASET:
            dataset = a.word("dataset")
            return (f"An earlier doctor run left its write test's dataset {dataset} on "
                    f"{a.word('host')} (created {minute(a.count('created'))}, "
                    f"{format_size(a.count('used'))}): "
                    f"destroy it there with zfs destroy -r {dataset}")
        case _:
            raise ValueError(f"{a.kind} is worded by each face")


def note(n: Note) -> str:
    """A doctor note both faces word alike; ValueError for a kind each face words itself."""
    k = NoteKind
    match n.kind:
        case k.RAN_TO_END:
            return f"Ran to its end after {format_size(n.num('bytes'))}"
        case k.FROM_CACHE:
            return "Small snapshot: may come from cache"
        case k.SSH_UNREACHABLE:
            return f"The source cannot ssh to the destination: {n.word('reason')}"
        case k.COMPRESS_SAMPLE:
            return (f"Compressing with {n.word('tool')}: the first "
                    f"{format_size(n.num('sample'))} of the stream {n.num('ratio'):.1f}x smaller")
        case k.NO_COMPRESSOR:
            return f"Not measured: the source has no {n.word('tool')}"
        case k.RESENT:
            return (f"TCP segments sent again by {n.word('host')}: {n.num('share'):.1%} "
                    f"({n.count('again'):,} of {n.count('sent'):,})")
        case k.IFACE_LOSS:
            return f"On {n.word('host')}, {n.word('iface')} counted {_iface_loss(n)}"
        case k.NO_POOL:
            return "No pool on the destination to write into"
        case k.WRITE_LIMIT:
            return f"At most {format_size(n.num('limit'))} (a tenth of the free space)"
        case _:
            raise ValueError(f"{n.kind} is worded by each face")


def loss(x: Loss) -> str:
    """One thing a plan destroys or replaces, by name."""
    match x.kind:
        case LossKind.SNAPSHOT:
            return f"snapshot {x.name} ({x.detail})"
        case LossKind.DATASET:
            return f"dataset {x.name} and everything in it ({x.detail})"
        case LossKind.CONTENT:
            return f"the files of {x.name}, replaced by the copy ({x.detail})"
        case LossKind.PARTIAL:
            return f"the interrupted receive into {x.name} ({x.detail})"
        case LossKind.UNMOUNTED:
            return f"dataset {x.name} unmounted ({x.detail})"
        case LossKind.HIDDEN:
            return f"the files in the folder {x.name} ({x.detail})"


def losses_by_host(lost: Sequence[Loss], source: str, destination: str, *,
                   hidden: bool = False) -> list[tuple[str, list[str]]]:
    """(host, what is lost there, worded) for each host that loses anything: what is
    destroyed or replaced, or (`hidden`) what is unmounted or covered by a mount."""
    out = []
    for side, host in ((SOURCE, source), (DESTINATION, destination)):
        lines = [loss(x) for x in lost if x.host_side == side
                 and (x.kind in HIDING) == hidden]
        if lines:
            out.append((host, lines))
    return out


def contents(e: Emptiness) -> str:
    """What an existing destination holds, in figures: "1 file or folder: notes.txt; 116 KiB
    referenced; 2 snapshots; 1 child dataset (backup/old)"."""
    parts: list[str] = []
    if e.entry_count:
        n = e.entry_count
        names = ", ".join(e.entries) + (", …" if n > len(e.entries) else "")
        parts.append(f"{n} {'file or folder' if n == 1 else 'files or folders'}: {names}")
    parts.append(f"{format_size(e.referenced)} referenced")
    if e.snapshots:
        parts.append(f"{e.snapshots} snapshot{'s' if e.snapshots != 1 else ''}")
    if e.children:
        n = len(e.children)
        parts.append(f"{n} child dataset{'s' if n != 1 else ''} ({', '.join(e.children[:3])}"
                     + (", …" if n > 3 else "") + ")")
    if e.volume:
        parts.append("a volume: its blocks cannot be listed")
    elif e.entry_count is None:
        parts.append("its files not listed (" + ("not mounted" if not e.mounted
                                                  else "its directory could not be read")
                     + ")")
    return "; ".join(parts)



def out_of_touch(e: OutOfTouch, now: float, why: bool = True) -> str:
    """Following a job on another machine: touch lost (and how often it is tried again; `why`:
    with the last try's failure), or back."""
    gone = duration(max(0.0, now - e.since))
    if e.back:
        return f"Back in touch with {e.runner} after {gone}; the job went on there"
    reason = f" ({e.reason})" if e.reason and why else ""
    return (f"Out of touch with {e.runner} for {gone}{reason}: the job goes on there; trying "
            f"again every {duration(e.retry_in)}")
