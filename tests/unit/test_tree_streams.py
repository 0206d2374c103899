"""Which datasets of a tree go together in one replication stream (tree_streams)."""

from __future__ import annotations

import dataclasses

from zmigrate.engine import zfs
from zmigrate.engine.tree.planning.entry import SMALL, TreeEntry
from zmigrate.engine.tree.planning.streams import catch_up_units

NAMES = ("tank", "tank/a", "tank/a/x", "tank/b", "tank/b/y")


def _sets(prefix: str, names: tuple[str, ...] = NAMES) -> list[zfs.Dataset]:
    return [zfs.Dataset(prefix + n[4:], "filesystem", 1, 1, 1, 1, 0) for n in names]


def _entries(size: int = 1000, **changes: dict[str, object]) -> list[TreeEntry]:
    out = []
    for n in NAMES:
        e = TreeEntry(n, "bk" + n[4:], "filesystem", size, "incremental", "from @s1",
                      base="s1")
        out.append(dataclasses.replace(e, **changes.get(n, {})))  # type: ignore[arg-type]
    return out


def _units(entries: list[TreeEntry], *, resumable: bool = True,
           src: list[zfs.Dataset] | None = None, dst: list[zfs.Dataset] | None = None,
           keep_root: bool = False) -> dict[str, str | None]:
    """source -> "unit" for a stream's root, the root that carries it, or None."""
    got = catch_up_units(entries, _sets("tank") if src is None else src,
                         _sets("bk") if dst is None else dst, root="tank", destination="bk",
                         resumable=resumable, keep_root=keep_root)
    return {e.source: "unit" if e.replicate else e.carried_by for e in got}


def test_a_small_plain_catch_up_of_the_whole_tree_is_one_stream() -> None:
    assert _units(_entries()) == {"tank": "unit", **dict.fromkeys(NAMES[1:], "tank")}


def test_a_big_or_unknown_delta_goes_dataset_by_dataset_where_the_destination_resumes() -> None:
    big = _entries(**{"tank/a/x": {"size": SMALL}})
    assert _units(big) == {"tank": None, "tank/a": None, "tank/a/x": None, "tank/b": "unit",
                           "tank/b/y": "tank/b"}
    unknown = _entries(**{"tank/b/y": {"size_known": False}})
    assert _units(unknown)["tank/b"] is None and _units(unknown)["tank/a"] == "unit"
    # zfs-fuse keeps no partial receive: nothing is lost by one stream, whatever its size.
    assert _units(big, resumable=False)["tank"] == "unit"


def test_what_one_stream_cannot_carry_keeps_its_subtree_apart() -> None:
    cases = [
        {"tank/a": {"base": None}},  # the destination holds a snapshot newer than the base
        {"tank/a": {"base": "s0"}},  # another base than its parent's
        {"tank/a": {"resume": True}},
        {"tank/a": {"action": "full"}},  # new on the destination
        {"tank/a": {"action": "skip"}},
        {"tank/a": {"origin": "tank/b@s0"}},
    ]
    for change in cases:
        units = _units(_entries(**change))
        assert units["tank"] is None and units["tank/a"] is None, change
        assert units["tank/b"] == "unit", change
    # An excluded child (on the source, not in the plan) would travel in -R: not its parent.
    units = _units([e for e in _entries() if e.source != "tank/a/x"])
    assert units["tank"] is None and units["tank/a"] is None and units["tank/b"] == "unit"
    # A dataset of the copy gone from the source: a replication stream must not meet it.
    units = _units(_entries(), dst=_sets("bk", (*NAMES, "tank/a/gone")))
    assert units["tank"] is None and units["tank/a"] is None and units["tank/b"] == "unit"
    encrypted = [dataclasses.replace(d, encryption="aes-256-gcm") if d.name == "tank/b/y"
                 else d for d in _sets("tank")]
    units = _units(_entries(), src=encrypted)
    assert units["tank"] is None and units["tank/b"] is None and units["tank/a"] == "unit"
    # A root received with a property of its own (--mount-root) goes alone.
    units = _units(_entries(), keep_root=True)
    assert units["tank"] is None and units["tank/a"] == "unit" and units["tank/b"] == "unit"
