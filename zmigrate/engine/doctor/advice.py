"""What to do about the slowest stage: advice from the stages' rates and CPU."""

from __future__ import annotations

from ..diagnosis import buffer_advice
from ..plan import Transport
from ..units import format_rate
from .results import StageResult


def advise(stages: list[StageResult], slowest: StageResult | None,
            transport: Transport) -> tuple[str, ...]:
    out: list[str] = []
    by = {s.name: s for s in stages}
    if slowest is not None:
        rate = slowest.rate or 0.0
        bound = slowest.cpu_bound
        if bound is not None:
            out.append(f"{bound.name} used {bound.cpu:.0f}% of a core on {bound.host} during "
                       f"{slowest.title}: that process, not the hardware, sets the pace")
        if slowest.name == "source_read":
            out += [f"the source pool reads at {format_rate(rate)}: check its disks with "
                    "`zpool iostat -v 1`; a pool of more vdevs reads faster (field notes: one "
                    "wide raidz 95 MB/s, the same disks as 4-6 raidz groups about 170 MB/s)",
                    "avoid other reads on the source pool while the transfer runs"]
        elif slowest.name == "network":
            out += [f"tcp between the hosts carries {format_rate(rate)}: check the link speed "
                    "(ethtool IFACE)",
                    "jumbo frames: ip link set dev IFACE mtu 9000 on both ends",
                    "larger NIC rings: ethtool -G IFACE rx 2048 tx 2048",
                    "check the CPU of the transport process (mbuffer, irq load)"]
        elif slowest.name.startswith("ssh"):
            out.append(f"ssh carries {format_rate(rate)}: use --transport tcp instead of ssh on "
                       "trusted networks")
        elif slowest.name == "destination_write":
            out += [f"the destination pool writes at {format_rate(rate)}: check its disks with "
                    "`zpool iostat -v 1`; more vdevs write faster, keep dedup and other "
                    "writes off it during the transfer"]
        out.append(buffer_advice(rate))
    ssh_rows = [s for s in stages if s.name.startswith("ssh_") and s.rate is not None]
    default = by.get("ssh_default")
    fastest = max(ssh_rows, key=lambda s: s.rate or 0.0, default=None)
    if fastest is not None and default is not None and default.rate and fastest.rate \
            and fastest is not default and fastest.rate > 1.2 * default.rate:
        cipher = fastest.details.get("cipher")
        out.append(f"over ssh, cipher {cipher} carries {format_rate(fastest.rate)} against "
                   f"{format_rate(default.rate)} for the default: try cipher {cipher} "
                   f"(--ssh-option Ciphers={cipher})")
    net = by.get("network")
    if transport is Transport.SSH and net is not None and net.rate and fastest is not None \
            and fastest.rate and net.rate > 1.5 * fastest.rate:
        out.append(f"tcp carries {format_rate(net.rate)}, {net.rate / fastest.rate:.1f}x ssh: use "
                   "--transport tcp instead of ssh where the network is trusted")
    for s in stages:
        bound = s.cpu_bound
        if bound is not None and s is not slowest and s.name.startswith("ssh"):
            out.append(f"{bound.name} at {bound.cpu:.0f}% of a core on {bound.host} during "
                       f"{s.title}: the cipher is CPU-bound")
    skipped = by.get("ssh")
    if skipped is not None and skipped.note:
        out.append(skipped.note + " (only the ssh transport needs it)")
    return tuple(dict.fromkeys(out))  # same sentence once
