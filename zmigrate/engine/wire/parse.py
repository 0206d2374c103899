"""Pure readers of `script.wire_script`'s output: one `LinkReading` per host."""

from __future__ import annotations

import re

from .reading import LinkReading, Rings

# Kinds whose reported speed is nominal (veth says 10000, tun 10): no wire behind them.
VIRTUAL_KINDS = ("veth", "tun", "dummy", "wireguard", "vxlan", "geneve", "ifb", "ipip", "gre")
_TC_RATE = re.compile(r"\b(rate|ceil)\s+(\d+(?:\.\d+)?)([KMGT]?)(bit|bps)\b")
_PREFIX = {"": 1, "K": 1000, "M": 1000**2, "G": 1000**3, "T": 1000**4}


def sections(text: str) -> dict[str, str]:
    """`@@name` sections of the script's output, by name (the lines after each)."""
    out: dict[str, str] = {}
    name = ""
    for line in text.splitlines():
        if line.startswith("@@"):
            name = line[2:].strip()
            out[name] = ""
        elif name:
            out[name] += line + "\n"
    return out


def _int(text: str | None) -> int | None:
    text = (text or "").strip()
    return int(text) if text.isdigit() else None


def route_iface(route: str) -> tuple[str | None, bool]:
    """(interface, local) from `ip route get` or FreeBSD's `route -n get`."""
    m = re.search(r"\bdev\s+(\S+)", route) or re.search(r"^\s*interface:\s*(\S+)", route, re.M)
    iface = m.group(1) if m else None
    local = route.lstrip().startswith("local ") or iface in ("lo", "lo0")
    return iface, local


def link_kind(link: str) -> str:
    """The kind `ip -d -o link` names (veth...), "loopback" for lo; "" for a plain NIC."""
    if "link/loopback" in link:
        return "loopback"
    for part in link.split("\\"):
        words = part.split()
        if words and words[0] in VIRTUAL_KINDS:
            return words[0]
    return ""


def ethtool_link(text: str) -> tuple[int | None, str | None]:
    """(speed in Mb/s, duplex) from `ethtool IF`; None for "Unknown!"."""
    speed = re.search(r"^\s*Speed:\s*(\d+)\s*Mb/s", text, re.M)
    duplex = re.search(r"^\s*Duplex:\s*(Full|Half)\b", text, re.M)
    return (int(speed.group(1)) if speed else None,
            duplex.group(1).lower() if duplex else None)


def ethtool_rings(text: str) -> Rings | None:
    """Current rx/tx rings and their maximums from `ethtool -g IF`."""
    maxima, _, current = text.partition("Current hardware settings:")
    if not current:
        return None

    def ring(block: str, name: str) -> int | None:
        m = re.search(rf"^{name}:\s*(\d+)\s*$", block, re.M)
        return int(m.group(1)) if m else None

    rings = Rings(ring(current, "RX"), ring(maxima, "RX"), ring(current, "TX"), ring(maxima, "TX"))
    return None if rings == Rings(None, None, None, None) else rings


def tc_rate(text: str) -> int | None:
    """The rate (bit/s) a root tbf shapes to, or the fastest root htb class's ceiling; None
    when nothing on the interface shapes."""
    rates: list[int] = []
    for line in text.splitlines():
        words = line.split()
        if len(words) < 3 or words[1] not in ("tbf", "htb") or "root" not in words:
            continue
        found = {k: float(n) * _PREFIX[p] * (8 if unit == "bps" else 1)
                 for k, n, p, unit in _TC_RATE.findall(line)}
        # htb: a class's ceil is the most it may take; the qdisc line itself has no rate.
        value = found.get("ceil", found.get("rate"))
        if value is not None and (words[0] == "class" or words[1] == "tbf"):
            rates.append(round(value))
    return max(rates) if rates else None


def ifconfig_link(text: str) -> tuple[int | None, str | None, int | None]:
    """(speed in Mb/s, duplex, MTU) from FreeBSD's `ifconfig IF`: its `media:` line names the
    negotiated medium, e.g. `media: Ethernet autoselect (1000baseT <full-duplex>)`."""
    mtu = re.search(r"\bmtu\s+(\d+)", text)
    media = re.search(r"^\s*media:.*\((\d+(?:\.\d+)?)(G?)base[^ )]*\s*<?([a-z-]*)", text,
                      re.M | re.I)
    speed = duplex = None
    if media:
        speed = round(float(media.group(1)) * (1000 if media.group(2).upper() == "G" else 1))
        duplex = ("full" if "full-duplex" in media.group(3)
                  else "half" if "half-duplex" in media.group(3) else None)
    return speed, duplex, int(mtu.group(1)) if mtu else None


def cpu_clock(text: str) -> tuple[int | None, int | None]:
    """(MHz now, top MHz): Linux cpufreq (kHz, averaged over the cores now, the top of the
    fastest), else FreeBSD's dev.cpu.0.freq and the first of its freq_levels."""
    lines = [x.strip() for x in text.splitlines()]
    cur = [int(x) for x in (lines[0] if lines else "").split() if x.isdigit()]
    top = [int(x) for x in (lines[1] if len(lines) > 1 else "").split() if x.isdigit()]
    if cur and top:
        return round(sum(cur) / len(cur) / 1000), round(max(top) / 1000)
    rest = [x for x in lines[2:] if x]
    if rest and rest[0].isdigit():
        levels = re.match(r"(\d+)/", rest[1]) if len(rest) > 1 else None
        return int(rest[0]), int(levels.group(1)) if levels else None
    return None, None


def parse_link(text: str, host: str, peer: str) -> LinkReading:
    """A host's `LinkReading` from the script's output (`peer`: the address it probed)."""
    s = sections(text)
    system = s.get("system", "").strip()
    iface, local = route_iface(s.get("route", ""))
    link = s.get("link", "")
    kind = link_kind(link)
    mtu = _int(s.get("mtu"))
    if mtu is None:
        m = re.search(r"\bmtu\s+(\d+)", link)
        mtu = int(m.group(1)) if m else None
    speed = _int(s.get("speed"))
    duplex = (s.get("duplex") or "").strip() or None
    eth_speed, eth_duplex = ethtool_link(s.get("ethtool", ""))
    speed, duplex = speed or eth_speed, duplex if duplex in ("full", "half") else eth_duplex
    if "ifconfig" in s:
        speed, duplex, mtu = ifconfig_link(s["ifconfig"])
    if kind or local:
        speed = duplex = None  # nominal figures of a virtual link
    pmtu = _int(s.get("pmtu"))
    cur, top = cpu_clock(s.get("cpufreq", ""))
    # The tools whose figures are unknown for their absence (FreeBSD has no ethtool nor tc).
    missing = tuple(name for name, section in (("ethtool", "ethtool"), ("tc", "tc"))
                    if system == "Linux" and iface and not local and section not in s)
    if iface and not local and "pmtu" in s and not s["pmtu"].strip():
        missing += ("ping",)
    return LinkReading(host, peer, system, iface, local, kind, speed, duplex, mtu,
                       pmtu, ethtool_rings(s.get("rings", "")), tc_rate(s.get("tc", "")),
                       cur, top, missing)
