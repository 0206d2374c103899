"""One place per decision (docs/architecture.md): each decision's one engine function."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from gui.history_data import make_plan, record, synthetic  # the Recorder fed a job's events

from zmigrate.engine import transports, zfs
from zmigrate.engine.cmdline import below, within
from zmigrate.engine.errors import PreflightError, PreflightReason
from zmigrate.engine.history import RECENT_RUNS, recent_runs
from zmigrate.engine.hosts import LocalHost, one_connection, same_host
from zmigrate.engine.hosts.login import HostSpec
from zmigrate.engine.job import Known
from zmigrate.engine.job.outlook import Outcome, Outlook, destination_outlook, partial_ways
from zmigrate.engine.plan import MEMORY_SHARE, Options, Site, stream_of
from zmigrate.engine.transports import Compression, Transport
from zmigrate.engine.transports.compress import Stream, Suggests, decide, suggest
from zmigrate.engine.tree import TreeEntry, TreePlan, TreeRequest, plan_tree
from zmigrate.engine.tree.planning.listing import Listed, list_commands
from zmigrate.engine.tree.running.dataset_job import as_if_snapshot_taken
from zmigrate.engine.units import MiB
from zmigrate.engine.verdict.diagnosis import GIGABIT_RATE, buffer_advice, buffer_suggestion
from zmigrate.engine.zfs import Dataset, ResumeInfo, Snapshot


def test_same_host_is_one_object_or_one_label() -> None:
    here = LocalHost()
    assert same_host(here, here)
    assert same_host(LocalHost(), LocalHost())  # two connections to this machine
    assert not same_host(LocalHost("lab-src"), LocalHost("lab-dst"))
    assert same_host(HostSpec.parse("this computer"), HostSpec.parse("local"))  # both `local`
    assert same_host(HostSpec.parse("root@nas"), HostSpec.parse("root@nas"))
    assert not same_host(HostSpec.parse("root@nas"), HostSpec.parse("nas"))


def test_one_connection_unless_the_destination_asks_for_sudo_alone() -> None:
    assert one_connection(HostSpec.parse("nas"), HostSpec.parse("nas"))
    assert one_connection(HostSpec.parse("nas", sudo=True), HostSpec.parse("nas", sudo=True))
    assert one_connection(HostSpec.parse("nas", sudo=True), HostSpec.parse("nas"))
    assert not one_connection(HostSpec.parse("nas"), HostSpec.parse("nas", sudo=True))
    assert not one_connection(HostSpec.parse("nas"), HostSpec.parse("backup"))


def test_within_and_below_a_root() -> None:
    assert within("tank/a", "tank/a") and not below("tank/a", "tank/a")
    assert within("tank/a/b", "tank/a") and below("tank/a/b", "tank/a")
    assert not within("tank/ab", "tank/a")  # a sibling sharing a prefix is not inside
    assert not within("tank", "tank/a")
    assert within("/mnt/tank/x", "/mnt/tank") and within("/mnt/tank/x", "/mnt/tank/")
    assert within("/srv", "/") and within("/", "/") and not below("/", "/")
    assert not within("/mnt/tankx", "/mnt/tank")


def test_recent_runs_of_one_copy_or_none(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    for n, dataset in enumerate(("backup/tank/a", "backup/tank/b", "other/x")):
        plan = make_plan(f"tank/{n}@s1", dataset=dataset, key=f"cafe000{n}")
        record(path, plan, synthetic(4, 50 * MiB, dips=False), start=1_000_000.0 + n)
    runs = recent_runs("backup/tank", path=path)
    assert [r.destination_dataset for r in runs] == ["backup/tank/b", "backup/tank/a"]
    assert RECENT_RUNS == 200
    (tmp_path / "broken.sqlite3").write_bytes(b"not a database, but some bytes " * 64)
    assert recent_runs("backup/tank", path=tmp_path / "broken.sqlite3") == []


def _ds(name: str, *snaps: tuple[str, int], written: int = 0) -> Dataset:
    return Dataset(name, "filesystem", hash(name) & 0xFFFF, 100, 50, 1000, 0,
                   [Snapshot(f"{name}@{s}", guid, i, i + 1, 1, 1)
                    for i, (s, guid) in enumerate(snaps)], written=written)


def test_as_if_snapshot_taken_gives_it_to_every_dataset_it_is_taken_on() -> None:
    host = LocalHost()
    # Copied at @s1; since then only tank/a was written to: tank/b is left unchanged.
    src = [_ds("tank", ("s1", 1), written=4096), _ds("tank/a", ("s1", 2), written=4096),
           _ds("tank/b", ("s1", 3))]
    dst = [_ds("bk/t" + d.name[4:], *[(x.short, x.guid) for x in d.snapshots]) for d in src]
    plan = plan_tree(host, host, TreeRequest("tank", "bk/t"), src, dst, snapshot="zm-2",
                     unmounted=True)
    assert [e.source for e in plan.unchanged] == ["tank/b"]
    known = as_if_snapshot_taken(Known(tuple(src), tuple(dst)), plan)
    after = {d.name: [s.short for s in d.snapshots] for d in known.src_sets}
    assert after == {"tank": ["s1", "zm-2"], "tank/a": ["s1", "zm-2"], "tank/b": ["s1"]}
    new = known.src_sets[1].snapshots[-1]
    assert new.guid == 0 and new.createtxg > known.src_sets[1].snapshots[0].createtxg
    assert known.dst_sets == tuple(dst)
    again = as_if_snapshot_taken(known, plan)  # taken already: nothing added twice
    assert again.src_sets == known.src_sets


class _Planned:
    """One dataset's plan as the listing reads it: its commands."""

    def __init__(self, name: str) -> None:
        self.name = name

    def commands(self) -> list[tuple[str, str]]:
        return [("dst", f"zfs receive {self.name}"), ("src", f"zfs send {self.name}")]


class _Tree:
    """A prepared tree job's dataset_plan: one dataset refused (its parent not there yet)."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def dataset_plan(self, entry: TreeEntry) -> _Planned:
        self.asked.append(entry.source)
        if entry.source == "tank/b":
            raise PreflightError("its parent is not there yet")
        return _Planned(entry.destination)


def test_list_commands_plans_ahead_of_the_snapshot_and_says_why_a_dataset_has_none() -> None:
    entries = (TreeEntry("tank", "bk/t", "filesystem", 10, "full", replicate=True),
               TreeEntry("tank/a", "bk/t/a", "filesystem", 5, "full", carried_by="tank"),
               TreeEntry("tank/b", "bk/t/b", "filesystem", 5, "incremental", "from @x"),
               TreeEntry("tank/c", "bk/t/c", "volume", 5, "skip", "@s already there"),
               TreeEntry("tank/d", "bk/t/d", "filesystem", 5, "full"))
    taken = TreePlan("src", "dst", "tank", "bk/t", "zm-2", "zfs snapshot -r tank@zm-2", None,
                     entries, (), (), "")
    job = _Tree()
    rows = {d.entry.source: d for d in list_commands(job, taken)}  # type: ignore[arg-type]
    assert [d.listed for d in rows.values()] == [Listed.COMMANDS, Listed.CARRIED,
                                                 Listed.UNDECIDED, Listed.SKIPPED,
                                                 Listed.COMMANDS]
    assert rows["tank"].commands == (("dst", "zfs receive bk/t"), ("src", "zfs send bk/t"))
    assert rows["tank"].ahead == "zm-2"  # planned as if the snapshot to be taken existed
    assert rows["tank/b"].error is not None and "parent" in rows["tank/b"].error.message
    assert job.asked == ["tank", "tank/b", "tank/d"]  # neither carried nor skipped is planned
    named = replace(taken, snapshot_command=None)
    assert all(d.ahead is None for d in list_commands(_Tree(), named))  # type: ignore[arg-type]
    limited = list_commands(_Tree(), named, limit=3)  # type: ignore[arg-type]
    assert [d.listed for d in limited][3:] == [Listed.SKIPPED, Listed.LATER]


DATA = Path(__file__).parents[1] / "data" / "zfs"
OPENZFS = zfs.parse_probe((DATA / "openzfs-2.3" / "probe.txt").read_text())  # captured
FUSE = zfs.parse_probe((DATA / "zfs-fuse" / "probe.txt").read_text())


def _with_zstd(caps: zfs.Capabilities) -> zfs.Capabilities:
    return replace(caps, tools=replace(caps.tools, tools=caps.tools.tools | {"zstd"}))


def test_compression_is_suggested_by_the_rules_decide_plans_with() -> None:
    lz4 = Dataset("tank/db", "filesystem", 1, 0, 0, 0, 0, compression="lz4")
    ozfs, fuse = _with_zstd(OPENZFS), _with_zstd(FUSE)
    tcp = transports.carrier(Transport.TCP)
    # Both OpenZFS: lz4 blocks go as stored (send -c), as make_plan sends them: none.
    stream = stream_of(lz4, ozfs, ozfs, Options())
    assert stream == Stream(raw=False, as_stored=True, compression="lz4")
    got = suggest(tcp, stream, [("nas", ozfs), ("backup", ozfs)])
    assert (got.compression, got.why, got.stored) == (Compression.NONE, Suggests.AS_STORED, "lz4")
    assert decide(Compression.ZSTD, False, tcp, stream, [("nas", ozfs), ("backup", ozfs)])[0] \
        is None  # the plan leaves it out for the same reason
    # zfs-fuse cannot send -c: the blocks go decompressed, so zstd pays.
    got = suggest(tcp, stream_of(lz4, fuse, fuse, Options()), [("a", fuse), ("b", fuse)])
    assert (got.compression, got.why) == (Compression.ZSTD, Suggests.COMPRESSIBLE)
    assert suggest(tcp, stream_of(lz4, ozfs, ozfs, Options(compressed=False)),
                   [("a", ozfs)]).compression is Compression.ZSTD
    encrypted = replace(lz4, encryption="aes-256-gcm")
    assert suggest(tcp, stream_of(encrypted, ozfs, ozfs, Options()), []).why is Suggests.RAW
    assert suggest(transports.carrier(Transport.LOCAL), stream, []).why is Suggests.ONE_HOST
    got = suggest(tcp, stream_of(replace(lz4, compression="off"), fuse, OPENZFS, Options()),
                  [("a", fuse), ("backup", OPENZFS)])  # the captured probe has no zstd
    assert (got.compression, got.why, got.host) == (Compression.NONE, Suggests.NO_TOOL, "backup")
    assert got.install is not None and "zstd" in got.install


def test_the_buffer_suggestion_is_the_five_second_rule_within_memory() -> None:
    assert buffer_suggestion(None, []) == buffer_advice(GIGABIT_RATE)
    assert buffer_suggestion(20 * MiB, [0]).figures["size"] == 128 * MiB
    free = [OPENZFS.mem_available or 0, FUSE.mem_available or 0]  # 3.8 GB, 24.8 GB
    assert "memory" not in buffer_suggestion(None, free).figures  # 576 MiB fits
    cut = buffer_suggestion(500 * MiB, free)  # 2.5 GB wanted: 25 % of the smaller, in 64 MiB
    assert cut.figures["size"] == int(free[0] * MEMORY_SHARE) // (64 * MiB) * 64 * MiB
    assert cut.figures["memory"] == free[0]


def _snap(name: str, guid: int, txg: int) -> Snapshot:
    return Snapshot(name, guid, 1_700_000_000 + txg, txg, MiB, 24 * MiB)


def _sites(dst_snaps: tuple[tuple[str, int], ...] | None, *, parent: bool = True,
           token: str | None = None) -> tuple[Site, Site]:
    """tank/data@s1, @s2 on the source; backup (the parent) and backup/data on the
    destination as asked; both ends the captured OpenZFS 2.3 probe."""
    src = Site(LocalHost("nas"), OPENZFS, [
        Dataset("tank/data", "filesystem", 2, 0, 0, 2**34, 0,
                [_snap("tank/data@s1", 101, 10), _snap("tank/data@s2", 102, 20)])])
    dst_sets = [Dataset("backup", "filesystem", 3, 0, 0, 2**34, 0)] if parent else []
    if dst_snaps is not None:
        dst_sets.append(Dataset("backup/data", "filesystem", 4, 0, 0, 2**34, 0,
                                [_snap(f"backup/data@{s}", g, 10 + i)
                                 for i, (s, g) in enumerate(dst_snaps)], resume_token=token))
    return src, Site(LocalHost("backup-01"), OPENZFS, dst_sets)


def test_destination_outlook_says_what_sending_there_would_do() -> None:
    def seen(dst_snaps: tuple[tuple[str, int], ...] | None, **kw: bool) -> Outlook:
        src, dst = _sites(dst_snaps, **kw)
        return destination_outlook(src, dst, "tank/data@s2", "backup/data", Transport.TCP)

    new = seen(None)
    assert new.outcome is Outcome.NEW and new.plan is not None and new.plan.kind == "full"
    inc = seen((("s1", 101),))
    assert inc.outcome is Outcome.INCREMENTAL and inc.plan is not None
    assert (inc.plan.base, inc.plan.arrives) == ("s1", ("s2",))
    diverged = seen((("s1", 101), ("own", 999)))  # --force would roll back @own
    assert diverged.outcome is Outcome.CONFLICT and diverged.refusal is not None
    assert diverged.refusal.reason is PreflightReason.DIVERGED
    assert diverged.forced is not None and diverged.forced.rolled_back == ("own",)
    unrelated = seen((("other", 555),))  # never destroyed: nothing to force
    assert unrelated.outcome is Outcome.CONFLICT and unrelated.forced is None
    there = seen((("s1", 101), ("s2", 102)))
    assert there.refusal is not None and there.refusal.reason is PreflightReason.ALREADY_THERE
    orphan = seen(None, parent=False)  # refused for a reason that is not a conflict
    assert orphan.outcome is Outcome.REFUSED and orphan.refusal is not None
    assert orphan.refusal.reason is PreflightReason.NO_PARENT
    assert orphan.refusal.figures == {"parent": "backup"}  # a face words its own fix


def test_partial_ways_plans_resume_and_discard_or_says_it_changed() -> None:
    token = "1-abc-def-0"
    src, dst = _sites((), token=token)
    received = 9 * MiB
    info = ResumeInfo(token, "tank/data@s2", 102, None, received, 15 * MiB)
    ways = partial_ways(src, dst, "tank/data@s2", "backup/data", Transport.TCP, info)
    assert not ways.changed and not ways.keeps_snapshots
    assert ways.resume is not None and ways.resume.resume_token == token
    assert ways.discard is not None and ways.discard.discard and ways.discard.kind == "full"
    other = replace(info, token="1-other-0")  # read after the list: not what it shows now
    assert partial_ways(src, dst, "tank/data@s2", "backup/data", Transport.TCP, other).changed
    unread = partial_ways(src, dst, "tank/data@s2", "backup/data", Transport.TCP, None)
    assert unread.resume is None and unread.resume_refused is None  # nothing to plan it on
    assert unread.discard is not None
    wrong = partial_ways(src, dst, "tank/data@s1", "backup/data", Transport.TCP, info)
    assert wrong.resume is None and wrong.resume_refused is not None  # another snapshot


def _copies(found: Callable[[ast.AST], bool], home: str) -> list[str]:
    package = Path(__file__).parents[2] / "zmigrate"
    return sorted(
        f"{path.relative_to(package.parent)}:{node.lineno}: {ast.unparse(node)}"
        for path in package.rglob("*.py") if path.relative_to(package).as_posix() != home
        for node in ast.walk(ast.parse(path.read_text())) if found(node))


def _inside_test(node: ast.AST) -> bool:
    """`name.startswith(root + "/")` or `.startswith(f"{root}/")`: within/below written out."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "startswith" and node.args):
        return False
    arg = node.args[0]
    if isinstance(arg, ast.BinOp) and isinstance(arg.right, ast.Constant):
        return arg.right.value == "/"
    return isinstance(arg, ast.JoinedStr) and isinstance(arg.values[-1], ast.Constant) \
        and str(arg.values[-1].value).endswith("/")


def _labels_compared(node: ast.AST) -> bool:
    """`a.label == b.label`: whether two ends are one host, written out."""
    return isinstance(node, ast.Compare) and sum(
        isinstance(side, ast.Attribute) and side.attr == "label"
        for side in [node.left, *node.comparators]) >= 2


def test_each_decision_is_written_in_its_one_place_only() -> None:
    assert _copies(_inside_test, "engine/cmdline.py") == []
    assert _copies(_labels_compared, "engine/hosts/same.py") == []
    for line in ('n.startswith(root + "/")', 'n.startswith(f"{root}/")'):
        assert _inside_test(ast.parse(line).body[0].value), line  # type: ignore[attr-defined]
    assert not _inside_test(ast.parse('p.startswith("/")').body[0].value)  # type: ignore[attr-defined]
    assert _labels_compared(ast.parse("a.label == b.host.label").body[0].value)  # type: ignore[attr-defined]
