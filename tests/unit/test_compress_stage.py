"""Compression in transit, decided and placed: the compressor before the sender's mbuffer, the
decompressor before the receiver's; refused, left out or insisted on as the stream and the hosts
allow; and what the doctor predicts of it."""

from __future__ import annotations

import dataclasses

import pytest
from test_plan import CAPS, sites

from zmigrate.engine.doctor import HostCpu, ProcessCpu, StageResult
from zmigrate.engine.doctor.compress import (
    Machines,
    compress_advice,
    cpu_limit,
    part_cpu,
    predict,
    probe_line,
    sample_size,
)
from zmigrate.engine.errors import PreflightError, PreflightReason
from zmigrate.engine.findings import AdviceKind, Note, NoteKind
from zmigrate.engine.plan import Options, Plan, make_plan
from zmigrate.engine.transports import Compression, Transport, carrier
from zmigrate.engine.transports.compress import COMPRESSORS, Stream, decide
from zmigrate.engine.units import MiB

WITH_TOOLS = dataclasses.replace(CAPS, tools=dataclasses.replace(
    CAPS.tools, tools=CAPS.tools.tools | {"zstd", "lz4"}))


def _plan(transport: Transport, tool: Compression, dst_caps: object = WITH_TOOLS,
          **opts: object) -> Plan:
    src, dst = sites(None, dst_exists=False, caps=WITH_TOOLS)
    dst = dataclasses.replace(dst, caps=dst_caps)
    return make_plan(src, dst, "tank/home@d", "backup/home",
                     Options(transport=transport, compress=tool, **opts),  # type: ignore[arg-type]
                     connect_address="192.0.2.7", allow_address="192.0.2.5", port=40001)


def test_tcp_compresses_before_the_senders_mbuffer_and_decompresses_after_the_wire() -> None:
    p = _plan(Transport.TCP, Compression.ZSTD)
    (_, dst_cmd), (_, src_cmd) = p.commands()
    assert src_cmd == ("zfs send tank/home@d | zstd -T0 -3 -q -c | "
                       "mbuffer -s 128k -m 1G -O 192.0.2.7:40001")
    assert dst_cmd == ("mbuffer -q -s 128k -m 8M -I 192.0.2.5:40001 | zstd -d -q -c | "
                       "mbuffer -s 128k -m 1G | zfs receive backup/home")
    assert p.compress == "zstd" and "compressed in transit with zstd" in p.describe()


@pytest.mark.parametrize("transport", [Transport.SSH, Transport.RELAY])
def test_ssh_and_relay_place_the_stage_the_same_way(transport: Transport) -> None:
    p = _plan(transport, Compression.LZ4)
    # ssh: one line on the source (the receive inside its ssh); relay: one on each host.
    line = " | ".join(c for h, c in sorted(p.commands(), key=lambda hc: hc[0] != "src"))
    assert line.index("zfs send") < line.index("lz4 -q -c") < line.index("mbuffer") \
        < line.index("lz4 -d -q -c") < line.rindex("mbuffer") < line.index("zfs receive")


def test_private_compresses_then_encrypts_and_decrypts_then_decompresses() -> None:
    """The TLS ends carry the compressed stream: zstd before the sender's mbuffer and its TLS
    end; on the destination, the TLS end, a small quiet buffer, zstd -d, the mbuffer."""
    able = dataclasses.replace(WITH_TOOLS, tools=dataclasses.replace(
        WITH_TOOLS.tools, socat=(1, 7, 4, 4), openssl=(3, 0, 15), probed=True))
    src, dst = sites(None, dst_exists=False, caps=able)
    p = make_plan(src, dst, "tank/home@d", "backup/home",
                  Options(transport=Transport.PRIVATE, compress=Compression.ZSTD),
                  connect_address="192.0.2.7", allow_address="192.0.2.5", port=40001)
    (_, dst_cmd), (_, src_cmd) = p.commands()
    assert src_cmd.index("zfs send") < src_cmd.index("zstd -T0 -3 -q -c") \
        < src_cmd.index("mbuffer -s 128k -m 1G") < src_cmd.index("OPENSSL:192.0.2.7:40001")
    assert dst_cmd.index("OPENSSL-LISTEN:40001") < dst_cmd.index("mbuffer -q -s 128k -m 8M") \
        < dst_cmd.index("zstd -d -q -c") < dst_cmd.index("mbuffer -s 128k -m 1G") \
        < dst_cmd.index("zfs receive backup/home")


def test_a_missing_tool_is_refused_naming_the_host_and_its_install_command() -> None:
    with pytest.raises(PreflightError) as e:
        _plan(Transport.TCP, Compression.ZSTD, dst_caps=CAPS)
    assert e.value.reason is PreflightReason.MISSING_TOOL and e.value.host == "dst"
    assert "zstd is not installed" in str(e.value) and "apt install zstd" in str(e.value)


def test_none_local_raw_and_compressed_blocks_are_left_alone_unless_insisted() -> None:
    from zmigrate.gui import words as gui_words

    ends = [("src", WITH_TOOLS), ("dst", WITH_TOOLS)]
    tcp, local = carrier(Transport.TCP), carrier(Transport.LOCAL)
    assert decide(Compression.NONE, False, tcp, Stream(), ends) == (None, [])
    chosen, notes = decide(Compression.ZSTD, False, local, Stream(), ends)
    assert chosen is None and "one host" in notes[0]
    chosen, notes = decide(Compression.ZSTD, False, tcp, Stream(raw=True), ends)
    assert chosen is None and "raw" in str(notes[0]) and "--compress-always" in str(notes[0])
    # The wizard offers no such choice: it says what happened, and no flag.
    assert "raw" in gui_words.caveat(notes[0]) and "--" not in gui_words.caveat(notes[0])
    as_stored = Stream(as_stored=True, compression="lz4")
    chosen, notes = decide(Compression.ZSTD, False, tcp, as_stored, ends)
    assert chosen is None and "compression=lz4" in str(notes[0])
    chosen, notes = decide(Compression.ZSTD, True, tcp, as_stored, ends)
    assert chosen is not None and chosen.name == "zstd" and notes == []
    # Sent as stored but stored uncompressed: compressing pays.
    off = Stream(as_stored=True, compression="off")
    chosen, _ = decide(Compression.ZSTD, False, tcp, off, ends)
    assert chosen is not None


def test_the_md5_is_not_compared_on_a_compressed_stream_and_the_plan_says_why() -> None:
    p = _plan(Transport.TCP, Compression.ZSTD, verify_hash=True)
    assert not p.stream_hash and all("--hash" not in c for _, c in p.commands())
    assert any("md5 is not compared" in w for w in p.warnings)


def _stage(name: str, mib: float, host: str, busy: float, **details: object) -> StageResult:
    """A stage of 10 s that kept `host` `busy` % busy."""
    rate = mib * MiB
    return StageResult(name, name, rate, 10.0, int(rate * 10), True,
                       (HostCpu(host, busy, 2, (ProcessCpu(host, 1, "zfs", 50.0),)),),
                       details=dict(details))


def test_the_compressors_cpu_is_read_from_each_parts_own_times() -> None:
    # Captured from probe_line under dash (stderr and stdout as the doctor's meter keeps
    # them): each part's subshell says its status, then its own and its children's `times`.
    lines = ["summary: 15.6 MiByte in  0.0sec - average of  318 MiB/s",
             "zmigrate-cpu compress 0", "0m0.000000s 0m0.000000s",
             "0m3.620000s 0m0.100000s", "538997",
             "zmigrate-cpu decompress 0", "0m0.000000s 0m0.000000s",
             "0m0.800000s 0m0.100000s"]
    assert part_cpu(lines) == {"compress": (0, pytest.approx(3.72)),
                               "decompress": (0, pytest.approx(0.9))}
    # stdout's count read between the mark and its times (two pipes, either first): the
    # same figures (a CI run once read none).
    crossed = [*lines[:2], "538997", lines[2], lines[3], *lines[5:]]
    assert part_cpu(crossed) == part_cpu(lines)
    # Cut off before its times: the status stands, the CPU is not known.
    assert part_cpu(lines[:2]) == {"compress": (0, None)}
    assert part_cpu(["zmigrate-cpu compress 137"]) == {"compress": (137, None)}


def test_the_probe_writes_no_file_and_holds_the_sample_in_memory() -> None:
    """No plaintext at rest: the stream goes through pipes and mbuffers' memory only, never
    into a file (no redirection but to /dev/null, no /tmp), and the sample fits the source's
    free memory."""
    line = probe_line("zfs send tank/home@d 2>/dev/null", COMPRESSORS[Compression.ZSTD],
                      256 * MiB)
    assert "/tmp" not in line and "mktemp" not in line and " -o " not in line
    assert [w for w in line.replace(">&2", "").split() if w.startswith(">")] == [">"]
    assert line.count("> /dev/null") == 1 and line.count("2>/dev/null") == 3
    assert line.count("mbuffer -q -s 128k -m") == 2 and line.count("-P 100") == 2
    assert sample_size(None, 10, None) == 256 * MiB
    assert sample_size(100 * MiB, 2, None) == 100 * MiB
    assert sample_size(None, 10, 400 * MiB) == 100 * MiB  # a quarter of the free memory
    assert sample_size(1.0, 10, None) == 16 * MiB


def test_the_prediction_multiplies_the_link_and_shares_a_busy_cpu() -> None:
    read = _stage("source_read", 600, "src", 95)
    squeeze = _stage("compress", 140, "src", 95, ratio=4.0, tool="zstd")
    net = _stage("network", 46, "src", 40)
    write = _stage("destination_write", 300, "dst", 95)
    apart = Machines("src", "dst", shared=False)
    p = predict([read, net, write], squeeze, Transport.TCP, apart)
    assert p is not None and p.without == 46 * MiB and p.link == 46 * MiB
    # zfs send and zstd each kept 95 % of the source's CPU busy: at once, their shares add,
    # with the wire's (40 % busy at 46 MiB/s: its ends and the kernel's network work) for the
    # quarter of a wire byte a stream byte is, compressed 4:1.
    assert p.with_ == pytest.approx(1 / (0.95 / 600 + 0.95 / 140 + 0.40 / 46 / 4) * MiB,
                                    rel=0.01)
    # Both hosts one machine: the write shares it too.
    shared = cpu_limit([read, squeeze, write], dataclasses.replace(apart, shared=True), True)
    assert shared == pytest.approx(1 / (0.95 / 600 + 0.95 / 140 + 0.95 / 300) * MiB, rel=0.01)
    # A read that ran to its end (from cache) still costs zfs send's CPU, and the transfer
    # reads from that cache too: it counts.
    cached = dataclasses.replace(read, notes=(Note(NoteKind.RAN_TO_END, {"bytes": 1}),))
    assert cpu_limit([cached, squeeze, write], apart, True) == pytest.approx(
        1 / (0.95 / 600 + 0.95 / 140) * MiB, rel=0.01)
    advice = compress_advice(p, "zstd", "src")
    assert advice.kind is AdviceKind.COMPRESS_ON and advice.num("ratio") == 4.0
    fast = _stage("network", 1100, "src", 40)
    p = predict([read, fast, write], squeeze, Transport.TCP, apart)
    assert p is not None and compress_advice(p, "zstd", "src").kind is AdviceKind.COMPRESS_OFF


def test_the_compressors_own_cpu_seconds_and_the_decompressor_count_where_measured() -> None:
    """`times` says what the compressing pipeline itself used (the host's busy share also
    holds the sample's read); the decompressor runs on the destination, beside the write."""
    read = _stage("source_read", 600, "src", 95)
    # 10 s at 140 MiB/s on 2 cores: 18 CPU seconds is 90 % of the machine; decompressing 4.
    squeeze = _stage("compress", 140, "src", 60, ratio=4.0, tool="zstd", cpu_seconds=18.0,
                     decompress_seconds=4.0)
    squeeze = dataclasses.replace(squeeze, cpu=(*squeeze.cpu, HostCpu("dst", 5, 4)))
    write = _stage("destination_write", 300, "dst", 95)
    apart = Machines("src", "dst", shared=False)
    per_byte = 18.0 / squeeze.bytes / 2
    decompress = 4.0 / squeeze.bytes / 4
    assert cpu_limit([read, squeeze, write], apart, True) == pytest.approx(
        min(1 / (0.95 / 600 / MiB + per_byte), 1 / (0.95 / 300 / MiB + decompress)), rel=0.01)
    # Without compressing, neither counts.
    assert cpu_limit([read, squeeze, write], apart, False) is None


def test_the_wires_cpu_counts_for_the_compressed_bytes_it_carries() -> None:
    """Over private the TLS ends, the mbuffers around them and the kernel's network work cost
    CPU for each byte the wire carries (the machine's busy share while the tls stage ran):
    compressed 4:1, a stream byte costs a quarter of a wire byte's. On a 2-core machine
    holding both hosts (the lab), that share adds to zfs send's, the compressor's and the
    write's, counted once for the one machine."""
    read = _stage("source_read", 600, "src", 95)
    squeeze = _stage("compress", 140, "src", 60, ratio=4.0, tool="zstd", cpu_seconds=18.0)
    write = _stage("destination_write", 300, "dst", 95)
    # 10 s at 46 MiB/s: the ends own 1.2 s and 2.1 s of CPU (private_cost reads those).
    tls = _stage("tls", 46, "src", 15, own_cpu={"src": 1.2, "dst": 2.1})
    tls = dataclasses.replace(tls, cpu=(*tls.cpu, HostCpu("dst", 15, 2)))
    shared = Machines("src", "dst", shared=True)
    before = 0.95 / 600 / MiB + 18.0 / squeeze.bytes / 2 + 0.95 / 300 / MiB
    wire = 0.15 / (46 * MiB) / 4.0  # the machine 15 % busy carrying 46 MiB/s of wire
    assert cpu_limit([read, squeeze, tls, write], shared, True) == pytest.approx(
        1 / (before + wire), rel=0.01)
    # Uncompressed, a stream byte is a wire byte.
    assert cpu_limit([read, tls, write], shared, False) == pytest.approx(
        1 / (0.95 / 600 / MiB + 0.95 / 300 / MiB + 0.15 / (46 * MiB)), rel=0.01)
    p = predict([read, tls, write], squeeze, Transport.PRIVATE, shared)
    assert p is not None and p.with_ == pytest.approx(1 / (before + wire), rel=0.01)
