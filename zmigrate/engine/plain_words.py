"""The sentences both faces say alike: findings, advice and doctor notes that name no control of
the wizard and no flag of the command line (a command to run on a host, a figure, a cause).

`cli/words.py` and `gui/words.py` word the other kinds for their users and hand these kinds
here, so one sentence is written once.
"""

from __future__ import annotations

from .findings import Advice, AdviceKind, Finding, FindingKind, Note, NoteKind
from .units import format_rate, format_size

# How to time a pool's writes by hand (compression would flatter zeros).
DD = "`dd if=/dev/zero bs=1M count=10240 | mbuffer -o /POOL/benchfile` with compression off"


def pct(value: float) -> str:
    """A buffer fill as mbuffer prints it: whole percents."""
    return f"{value:.0f}%"


def finding(f: Finding) -> str:
    """A finding of a kind both faces word alike; ValueError for a kind each face words itself."""
    k = FindingKind
    match f.kind:
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
        case _:
            raise ValueError(f"{f.kind} is worded by each face")


def compress_gain(a: Advice) -> str:
    """The doctor's compression figures: `zstd: 1.9x smaller, 180 MiB/s on zb-src's CPU: the
    link's 47 MiB/s becomes ~89 MiB/s` (the link's part where the link was measured)."""
    text = (f"Compressing with {a.word('tool')}: {a.num('ratio'):.1f}x smaller, "
            f"{format_rate(a.num('rate'))} on {a.word('host')}'s CPU")
    if a.num("link"):
        return (text + f": the link's {format_rate(a.num('link'))} becomes "
                f"~{format_rate(a.num('predicted'))}")
    return text + f": the transfer would go at ~{format_rate(a.num('predicted'))}"


def advice(a: Advice) -> str:
    """Advice of a kind both faces word alike; ValueError for a kind each face words itself."""
    k = AdviceKind
    match a.kind:
        case k.CIPHER_CPU_BOUND:
            return (f"The cipher is CPU-bound: {a.word('process')} used {a.num('cpu'):.0f}% of "
                    f"a core on {a.word('host')} during \"{a.word('stage')}\"")
        case k.RELAY_PATH:
            return ("The stream goes through this computer, up one SSH session and down the "
                    "other: its link and its CPU (two ciphers) set the pace")
        case k.RELAY_NEARBY:
            return "Run zmigrate on a machine near both hosts (same network, wired)"
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
        case k.NO_POOL:
            return "No pool on the destination to write into"
        case k.WRITE_LIMIT:
            return f"At most {format_size(n.num('limit'))} (a tenth of the free space)"
        case _:
            raise ValueError(f"{n.kind} is worded by each face")
