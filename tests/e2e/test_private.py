"""The private transport (issue 33) on the lab: real sshd, zfs-fuse, mbuffer and OpenSSL.

A dataset and a tree arrive verified; a stranger on the source host that connects first with a
forged stream is refused and the real transfer completes; a squatter on the port gets nothing;
a packet capture of a transfer holds none of a known file's plaintext."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from lab.sshd import Lab
from lab.util import dataset_exists, snapshot_guid, tree_digest, wait_until, zfs
from lab.zfsfuse import Pool

from zmigrate.engine.errors import TransferError
from zmigrate.engine.events import LogLine, PlanReady
from zmigrate.engine.hosts import Host, key_dirs
from zmigrate.engine.job import Job, Request
from zmigrate.engine.job import decide as job_decide
from zmigrate.engine.plan import Options
from zmigrate.engine.transports import Transport
from zmigrate.engine.units import MiB

pytestmark = pytest.mark.lab

PRIVATE = Options(transport=Transport.PRIVATE, buffer_size=16 * MiB, readonly=False)


def _dataset(pool: Pool, name: str, mb: int, content: bytes | None = None) -> tuple[str, Path]:
    ds = f"{pool.name}/{name}"
    zfs("create", ds)
    mnt = pool.mountpoint / name
    (mnt / "data").write_bytes(content if content is not None else os.urandom(mb * MiB))
    zfs("snapshot", f"{ds}@s")
    return ds, mnt


def test_a_dataset_and_a_tree_over_the_private_transport(
        lab: Lab, pools: tuple[Pool, Pool], keys_left: Callable[[], list[str]],
        tmp_path: Path) -> None:
    """Both lab hosts have socat: private is the default between them, for a dataset and a
    tree alike; tcp stays there by name."""
    src, dst = pools
    ds, mnt = _dataset(src, "one", 8)
    r = lab.zmigrate("send", f"lab-src:{ds}@s", f"lab-dst:{dst.name}/one", "--hash",
                     "--no-history", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    plan = next(e for e in r.events if e["event"] == "plan")
    assert plan["transport"] == "private", plan
    assert snapshot_guid(f"{dst.name}/one@s") == snapshot_guid(f"{ds}@s")
    assert tree_digest(Path(zfs("get", "-H", "-o", "value", "mountpoint",
                                f"{dst.name}/one").strip())) == tree_digest(mnt)
    zfs("create", f"{src.name}/tree")
    for child in ("a", "b"):
        _dataset(src, f"tree/{child}", 2)
    zfs("snapshot", "-r", f"{src.name}/tree@t")
    r = lab.zmigrate("send", "-r", f"lab-src:{src.name}/tree@t", f"lab-dst:{dst.name}/tree",
                     "--compress", "zstd", "--no-history", "--dry-run", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    tree_plan = next(e for e in r.events if e["event"] == "tree_plan")
    assert tree_plan["transport"] == "private", tree_plan
    assert "Each stream goes over the private transport." in tree_plan["description"]
    r = lab.zmigrate("send", "-r", f"lab-src:{src.name}/tree@t", f"lab-dst:{dst.name}/tree",
                     "--compress", "zstd", "--no-history", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    steps = [e for e in r.events if e["event"] == "plan"]
    assert len(steps) == 3 and {e["transport"] for e in steps} == {"private"}, steps
    assert all("private: TLS 1.3" in e["description"] for e in steps), steps
    done = r.events[-1]
    assert done["event"] == "done" and done["verified"], done
    for child in ("a", "b"):
        assert snapshot_guid(f"{dst.name}/tree/{child}@t") \
            == snapshot_guid(f"{src.name}/tree/{child}@t")
        # zfs-fuse receives the tree's root with mountpoint=none: each child is looked at
        # where the test mounts it, once the run is over.
        at = tmp_path / child
        zfs("set", f"mountpoint={at}", f"{dst.name}/tree/{child}")
        assert wait_until(lambda at=at: (at / "data").exists(), 10), at
        assert tree_digest(at) == tree_digest(src.mountpoint / "tree" / child)
    assert wait_until(lambda: not keys_left(), 10), keys_left()


def test_a_private_send_sweeps_only_its_kind_of_stale_key_directory(
        lab: Lab, pools: tuple[Pool, Pool]) -> None:
    """Ends killed where no clean-up reached left a key directory an hour ago: the next
    private send over the lab's sshd removes it, and nothing else - a look-alike name, a key
    directory holding a file no step made (that file and its directory stay), the datasets."""
    src, dst = pools
    ds, mnt = _dataset(src, "swept", 2)
    stale, crowded = key_dirs.key_dirs()
    alike = "/tmp/zmigrate-tls-keep-me"
    old = time.time() - (key_dirs.STALE_MINUTES + 5) * 60
    try:
        for d in (stale, crowded, alike):
            Path(d).mkdir(mode=0o700)
            (Path(d) / "own.key").write_text("a killed step's key")
        (Path(crowded) / "notes.txt").write_text("not a step's")
        for d in (stale, crowded, alike):
            os.utime(d, (old, old))
        r = lab.zmigrate("send", f"lab-src:{ds}@s", f"lab-dst:{dst.name}/swept",
                         "--transport", "private", "--no-history")
        assert r.returncode == 0, r.stderr + r.stdout
        assert not Path(stale).exists()
        assert sorted(p.name for p in Path(crowded).iterdir()) == ["notes.txt"]
        assert (Path(alike) / "own.key").read_text() == "a killed step's key"
        assert snapshot_guid(f"{dst.name}/swept@s") == snapshot_guid(f"{ds}@s")
        assert tree_digest(mnt) == tree_digest(Path(zfs(
            "get", "-H", "-o", "value", "mountpoint", f"{dst.name}/swept").strip()))
    finally:
        for d in (stale, crowded, alike):
            shutil.rmtree(d, ignore_errors=True)


def _forged_stream(pool: Pool) -> bytes:
    """A real zfs stream of another dataset: what a stranger would try to plant."""
    ds, _ = _dataset(pool, "forged", 1, b"FORGED-BY-A-STRANGER\n" * 1000)
    return subprocess.run(["zfs", "send", f"{ds}@s"], capture_output=True, check=True,
                          timeout=60).stdout


def test_a_stranger_first_with_a_forged_stream_is_refused_and_the_transfer_completes(
        lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the listener is up and before the real sender starts, a process on the source
    host connects first: once with a forged stream in the clear, once over TLS with a
    certificate of its own. Both are refused; the real stream arrives and nothing else."""
    from zmigrate.engine.job.step import pipeline

    src_pool, dst_pool = pools
    ds, mnt = _dataset(src_pool, "real", 4)
    forged = _forged_stream(src_pool)
    tried: list[str] = []
    real_wait = pipeline.wait_ours

    def stranger_first(*args: object, **kwargs: object) -> None:
        real_wait(*args, **kwargs)  # type: ignore[arg-type]
        port = args[4]
        assert isinstance(port, int)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            try:
                s.sendall(forged)
                s.recv(1)
            except OSError:
                pass
        tried.append("cleartext")
        tried.append(_tls_stranger(port, forged))

    monkeypatch.setattr(pipeline, "wait_ours", stranger_first)
    seen: list[object] = []
    summary = Job(*lab_hosts, Request(f"{ds}@s", f"{dst_pool.name}/real", PRIVATE),
                  seen.append).run()
    assert tried == ["cleartext", "tls"], tried
    # The lab's hosts have socat (packaging/bootstrap.sh): each end is socat's.
    step = next(e.plan for e in seen if isinstance(e, PlanReady)).steps[0]
    assert "socat" in step.source_command and "OPENSSL:" in step.source_command
    assert step.destination_command is not None
    assert "OPENSSL-LISTEN:" in step.destination_command
    # The listener said why it refused each (the TLS stranger's certificate is not the job's).
    refusals = [e.text for e in seen if isinstance(e, LogLine) and e.host == "lab-dst"
                and e.text.startswith("openssl: ")]
    assert len(refusals) >= 2, refusals
    assert summary.source_guid == snapshot_guid(f"{dst_pool.name}/real@s")
    got = Path(zfs("get", "-H", "-o", "value", "mountpoint", f"{dst_pool.name}/real").strip())
    assert tree_digest(got) == tree_digest(mnt)
    assert b"FORGED" not in (got / "data").read_bytes()
    assert not dataset_exists(f"{dst_pool.name}/forged")


@pytest.mark.parametrize("tools", [("openssl", "socat"), ("socat", "openssl")])
def test_an_openssl_end_and_a_socat_end_carry_a_dataset_together(
        lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool], tools: tuple[str, str],
        monkeypatch: pytest.MonkeyPatch, keys_left: Callable[[], list[str]]) -> None:
    """A host without socat runs openssl s_client or s_server: either works with the other
    host's socat (both TLS 1.3, each pinning the other's certificate)."""
    from zmigrate.engine.transports import private

    src_pool, dst_pool = pools
    ds, mnt = _dataset(src_pool, "mixed", 4)
    monkeypatch.setattr(private.Private, "end_tools", lambda self, spec: tools)
    seen: list[object] = []
    name = f"{dst_pool.name}/mixed-{tools[0]}"
    summary = Job(*lab_hosts, Request(f"{ds}@s", name, PRIVATE), seen.append).run()
    step = next(e.plan for e in seen if isinstance(e, PlanReady)).steps[0]
    assert ("openssl s_client" in step.source_command) == (tools[0] == "openssl")
    assert ("OPENSSL-LISTEN" in (step.destination_command or "")) == (tools[1] == "socat")
    assert summary.source_guid == snapshot_guid(f"{name}@s")
    got = Path(zfs("get", "-H", "-o", "value", "mountpoint", name).strip())
    assert tree_digest(got) == tree_digest(mnt)
    assert wait_until(lambda: not keys_left(), 10), keys_left()


def _tls_stranger(port: int, payload: bytes) -> str:
    """openssl s_client with a certificate of its own, sending `payload` (its own exit
    status is a race: TLS 1.3 lets it send before the server has judged its certificate)."""
    if shutil.which("openssl") is None:
        raise AssertionError("openssl is part of the lab")
    work = Path(os.environ.get("TMPDIR", "/tmp")) / f"stranger-{os.getpid()}-{port}"
    work.mkdir(mode=0o700)
    try:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(work / "k"),
                        "-out", str(work / "c"), "-days", "1", "-subj", "/CN=stranger"],
                       capture_output=True, check=True, timeout=30)
        # The listener starts again after the cleartext stranger's refusal: until it
        # listens, the connection is refused and nothing was tried yet.
        for _ in range(200):
            r = subprocess.run(["openssl", "s_client", "-quiet", "-nocommands", "-no_ign_eof",
                                "-connect", f"127.0.0.1:{port}", "-cert", str(work / "c"),
                                "-key", str(work / "k"), "-tls1_3"], input=payload,
                               capture_output=True, timeout=30, check=False)
            if b"refused" not in r.stderr:
                return "tls"
            time.sleep(0.05)
        raise AssertionError(f"the listener never listened again: {r.stderr!r}")
    finally:
        shutil.rmtree(work)


def test_a_squatter_on_the_port_stops_the_job_and_gets_nothing(
        lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool],
        monkeypatch: pytest.MonkeyPatch, keys_left: Callable[[], list[str]]) -> None:
    src_pool, dst_pool = pools
    ds, _ = _dataset(src_pool, "sq", 1)
    squatter = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    squatter.bind(("0.0.0.0", 0))  # noqa: S104 - as a squatter on the destination would
    squatter.listen(8)
    busy = squatter.getsockname()[1]
    monkeypatch.setattr(job_decide, "free_port", lambda host, **kw: busy)
    try:
        with pytest.raises(TransferError) as info:
            Job(*lab_hosts, Request(f"{ds}@s", f"{dst_pool.name}/sq", PRIVATE)).run()
        squatter.setblocking(False)
        with pytest.raises(BlockingIOError):
            squatter.accept()
    finally:
        squatter.close()
    assert f"port {busy} on lab-dst is held by process {os.getpid()}" in info.value.message
    assert not dataset_exists(f"{dst_pool.name}/sq")
    assert wait_until(lambda: not keys_left(), 10), keys_left()


def _captured(lab: Lab, src: Pool, dst: Pool, ds: str, name: str, transport: str,
              port: int) -> bytes:
    """The loopback packets of one transfer on `port` (tcpdump, whole packets)."""
    pcap = Path(os.environ.get("TMPDIR", "/tmp")) / f"zm-{name}-{os.getpid()}.pcap"
    # A 64 MiB capture buffer: under load the default one dropped a third of the packets.
    dump = subprocess.Popen(["tcpdump", "-i", "lo", "-s", "0", "-B", "65536", "-U", "-w", str(pcap),
                             f"tcp port {port}"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        assert dump.stderr is not None
        ready = threading.Event()
        threading.Thread(target=lambda: (dump.stderr.readline(), ready.set()),  # type: ignore[union-attr]
                         daemon=True).start()
        ready.wait(10)
        r = lab.zmigrate("send", f"lab-src:{ds}@s", f"lab-dst:{dst.name}/{name}", "--transport",
                         transport, "--port", str(port), "--no-history")
        assert r.returncode == 0, r.stderr + r.stdout
        time.sleep(0.5)
    finally:
        dump.send_signal(signal.SIGINT)
        dump.wait(10)
    data = pcap.read_bytes()
    pcap.unlink()
    return data


def test_a_capture_of_the_private_transfer_holds_no_plaintext(
        lab: Lab, pools: tuple[Pool, Pool]) -> None:
    """A file of known text crosses loopback: the capture of the tcp transfer holds it (the
    capture works), the capture of the private one holds not one line of it."""
    src, dst = pools
    line = b"zmigrate known plaintext 5d41402abc4b2a76b9719d911017c592\n"
    ds = f"{src.name}/known"
    zfs("create", "-o", "compression=off", ds)
    (src.mountpoint / "known" / "data").write_bytes(line * 20000)
    zfs("snapshot", f"{ds}@s")
    from lab.util import free_port
    clear = _captured(lab, src, dst, ds, "clear", "tcp", free_port())
    assert clear.count(line) > 100, "the capture did not see the cleartext transfer"
    private = _captured(lab, src, dst, ds, "private", "private", free_port())
    # It saw most of the stream (a loaded machine may drop some packets), and none of it reads.
    assert len(private) > len(line) * 20000 // 2, len(private)
    assert b"known plaintext" not in private


def test_the_doctor_measures_the_private_stage_beside_the_network(
        lab: Lab, pools: tuple[Pool, Pool], keys_left: Callable[[], list[str]]) -> None:
    """The doctor between the lab hosts (private their default, as a job's): the tls stage
    runs on the path (socat to socat over the lab's link, keys made for it), beside cleartext
    tcp's network stage, with both hosts' CPU; its cost is the ratio of the two rates. No key
    directory is left."""
    src, dst = pools
    ds, _ = _dataset(src, "doc", 4)
    r = lab.zmigrate("doctor", f"lab-src:{ds}@s", f"lab-dst:{dst.name}", "--seconds", "2",
                     "--no-ssh", "--no-write-test", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    report = r.events[-1]
    assert report["transport"] == "private", report
    by = {s["name"]: s for s in report["stages"]}
    tls, network = by["tls"], by["network"]
    assert tls["error"] is None and tls["in_path"] and not network["in_path"], tls
    assert tls["rate"] > MiB and network["rate"] > MiB
    assert {c["host"] for c in tls["cpu"]} == {"lab-src", "lab-dst"}
    assert tls["tools"] == ["socat", "socat"]
    # The prediction: private beside tcp on this path, and what TLS costs each host a GiB.
    cost = report["private_cost"]
    assert cost is not None and 0 < cost["private"] <= cost["tcp"], cost
    assert 0 < cost["ratio"] <= 1 and set(cost["extra_cpu_per_gib"]) == {"lab-src", "lab-dst"}
    print(f"tls {tls['rate'] / MiB:.1f} MiB/s, network {network['rate'] / MiB:.1f} MiB/s, "
          f"predicted private/tcp {cost['ratio']:.2f}")
    assert wait_until(lambda: not keys_left(), 10), keys_left()
