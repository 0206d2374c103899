"""The wire's captured outputs (tests/data/wire, see its README) and readings made of them.

`compose` swaps sections of a captured script output for another capture (a documented
`ethtool` report in place of a virtual NIC's), so a case is made only of real outputs."""

from __future__ import annotations

from pathlib import Path

from zmigrate.engine.wire import LinkReading, Wire, ceiling, parse_link

DATA = Path(__file__).parent / "data" / "wire"


def capture(name: str) -> str:
    return (DATA / name).read_text()


def compose(base: str, **sections: str) -> str:
    """`base` (a script output's file) with the named sections replaced by these texts."""
    out: list[str] = []
    skipping = False
    for line in capture(base).splitlines():
        if line.startswith("@@"):
            name = line[2:].strip()
            skipping = name in sections
            out.append(line)
            if skipping:
                out.append(sections[name].rstrip("\n"))
            continue
        if not skipping:
            out.append(line)
    return "\n".join(out) + "\n"


def reading(text: str, host: str, peer: str = "192.0.2.1") -> LinkReading:
    return parse_link(text, host, peer)


def wire(source: LinkReading, destination: LinkReading) -> Wire:
    return Wire(source, destination, ceiling(source, destination))


def bad_cable() -> Wire:
    """The source's NIC negotiated 100 Mb/s (a recorded ethtool report), rings 256 of 4096, MTU
    1400; the destination a FreeBSD host at 1000baseT, MTU 1500."""
    src = reading(compose("linux-virtio-eth0.txt", ethtool=capture("ethtool-100mbit.txt"),
                          rings=capture("ethtool-g-256-of-4096.txt")), "tank.lan")
    return wire(src, reading(capture("freebsd-em0.txt"), "backup-01"))


def half_duplex_scaled() -> Wire:
    """A half-duplex 100 Mb/s source, a FreeBSD destination clocked down to 600 of 2400 MHz."""
    half = capture("ethtool-100mbit.txt").replace("Duplex: Full", "Duplex: Half")
    src = reading(compose("linux-virtio-eth0.txt", ethtool=half), "tank.lan")
    levels = capture("freebsd-em0.txt").split("@@cpufreq\n")[1].split("@@pmtu")[0]
    dst = reading(compose("freebsd-em0.txt", cpufreq=levels.replace("\n2400\n", "\n600\n")),
                  "backup-01")
    return wire(src, dst)


def shaped() -> Wire:
    """The captured veth pair: MTU 9000 and tbf 400 Mbit/s here, MTU 1500 at the far end."""
    return wire(reading(capture("linux-veth-9000-tbf.txt"), "lab-src", "10.216.250.2"),
                reading(capture("linux-veth-1500-far.txt"), "lab-far", "10.216.250.1"))
