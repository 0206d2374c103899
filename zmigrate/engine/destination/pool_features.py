"""Which `zfs send` flags make a stream the destination's pool can receive.

OpenZFS marks a stream with the features of what it holds, and `zfs receive` refuses a stream
its pool lacks one of ("pool must be upgraded to receive this stream"), whatever the data: blocks
sent as stored (-c) carry their compression (lz4, zstd), -e's embedded records are
lz4-compressed, -L's blocks pass 128 KiB. Without the flag the same data goes as plain records
that any pool takes, and is compressed again as the copy's own property says. A pool kept
compatible with an older system (`compatibility=grub2`, Ubuntu's boot pool; a pool made on
OpenZFS 0.8) lacks zstd; one made with `zpool create -d`, all of them (verified on the guest).
"""

from __future__ import annotations

from collections.abc import Mapping

from .. import zfs
from ..errors import PreflightError, PreflightReason

# The send flags, each with the pool features the stream then needs where the source uses them.
NEEDS: dict[str, tuple[str, ...]] = {
    "-c": ("lz4_compress", "zstd_compress"),
    "-e": ("embedded_data", "lz4_compress"),
    "-L": ("large_blocks",),
}
# What a raw stream cannot leave out (its blocks go as stored, encrypted), and how they
# would have to go instead.
RAW_KEEPS = {"-c": "decompressed", "-L": "split into 128 KiB blocks"}
WHAT = {
    "-c": "blocks go decompressed, compressed again as the copy's compression property says",
    "-e": "small blocks go as whole records",
    "-L": "blocks larger than 128 KiB go split",
}


def unreceivable(src: Mapping[str, str] | None,
                 dst: Mapping[str, str] | None) -> dict[str, str]:
    """{flag: the destination pool's missing feature} for each flag whose stream that pool
    would refuse: the feature active on the source's pool (or its features unread) and not on
    the destination's. Empty where the destination's were not read (zfs-fuse, an unreadable
    pool): zfs receive then says it itself."""
    if dst is None:
        return {}
    out: dict[str, str] = {}
    for flag, features in NEEDS.items():
        missing = [f for f in features if not zfs.feature_on(dst, f)
                   and (src is None or src.get(f) == "active")]
        if missing:
            out[flag] = missing[0]
    return out


def left_out(flag: str, feature: str, dst_label: str, pool: str) -> str:
    """The plan's note for a flag left out because pool `pool` lacks `feature`."""
    return (f"{dst_label}: pool {pool} lacks feature@{feature}, so zfs send {flag} is left out "
            f"and {WHAT[flag]}")


def refuse_encrypted(src: Mapping[str, str] | None, dst: Mapping[str, str] | None, pool: str,
                     dst_label: str, raw: str) -> None:
    """Refuse, before anything runs, encrypted datasets sent raw (`raw` names them) into a
    pool whose features say it cannot hold them: without feature@encryption, or without one
    their blocks use as stored (a raw stream keeps them compressed and whole, as on the
    source's disk: it cannot leave out -c or -L). Unread features: zfs receive says it."""
    if dst is None:
        return
    if not zfs.feature_on(dst, "encryption"):
        raise _lacking("encryption", pool, dst_label,
                       f"pool {pool} cannot hold encrypted datasets (its feature@encryption is "
                       f"not enabled), and {raw} sent raw")
    lacking = unreceivable(src, dst) if src is not None else {}
    kept = [f for f in RAW_KEEPS if f in lacking]
    if kept:
        feature = lacking[kept[0]]
        raise _lacking(feature, pool, dst_label,
                       f"pool {pool} lacks feature@{feature}, and {raw} sent raw: a raw stream "
                       "carries the blocks as the source's pool stores them (encrypted), so "
                       f"they cannot go {RAW_KEEPS[kept[0]]}")


def _lacking(feature: str, pool: str, dst_label: str, message: str) -> PreflightError:
    """The refusal of a raw stream into `pool` for want of `feature`, with its two ways out."""
    return PreflightError(
        message, host=dst_label,
        fix=f"enable it (zpool set feature@{feature}=enabled {pool}; older systems may then "
        "not import the pool), or choose --decrypt (the copy is then not encrypted)",
        reason=PreflightReason.UNSUPPORTED, figures={"feature": feature})


__all__ = ["NEEDS", "left_out", "refuse_encrypted", "unreceivable"]
