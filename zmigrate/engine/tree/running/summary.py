"""What a tree's run adds up to: its Summary, and the closing lines the CLI prints."""

from __future__ import annotations

import time

from ... import cmdline
from ...events import Summary
from ...units import format_size
from ..planning.plan import TreePlan
from .phases import Phases
from .schedule import Totals
from .states import SKIPPED, VERIFIED
from .verification import TreeCheck


def tree_summary(plan: TreePlan, totals: Totals, elapsed: float, results: dict[str, str],
                 readonly_since: float | None, checked: TreeCheck, *,
                 window: float = 0.0,
                 readonly_before: dict[str, dict[str, str]] | None = None,
                 phases: Phases | None = None) -> Summary:
    """The tree's Summary: its bytes and rate, each dataset's state in `extra`; `window`: the
    seconds from the first change on the source (a final sync's readonly=on, else its
    snapshot) to the checked copy (read-only that long in a final sync: `readonly_seconds`);
    `phases`: where the time went (what the next final sync's window is predicted from)."""
    extra: dict[str, object] = {
        "datasets": dict(results),
        "vanished": list(plan.vanished),
        "snapshot": plan.snapshot,
        "window_seconds": round(window, 3),
        "streams": len([e for e in plan.to_send if e.carried_by is None]),
    }
    if phases is not None:
        extra["phases"] = dict(phases.seconds)
        extra["phase_commands"] = dict(phases.commands)
    if readonly_since is not None:
        extra["source_readonly_since"] = readonly_since
        extra["readonly_seconds"] = round(window, 3)
        # The source datasets that were read-only before the final sync (go-live keeps them so).
        extra["readonly_before"] = {ds: p["readonly"] for ds, p in (readonly_before or {}).items()
                                    if "readonly" in p}
    if checked.own_key_roots:
        # Each sent as its own raw stream: `zfs change-key -i` re-joins them.
        extra["own_encryption_roots"] = dict(checked.own_key_roots)
    source_guid, destination_guid = checked.root_guids
    return Summary(
        bytes=totals.done, seconds=elapsed,
        rate=totals.done / totals.seconds if totals.seconds > 0 else 0.0,
        receive_empty_count=totals.empties or None,
        source_guid=source_guid, destination_guid=destination_guid,
        hash_match=None, snapshots_sent=(plan.snapshot,), extra=extra,
    )


def describe_summary(plan: TreePlan, summary: Summary) -> str:
    """The CLI's closing lines for a tree."""
    states: dict[str, str] = summary.extra.get("datasets", {})
    sent = sum(1 for s in states.values() if s == VERIFIED)
    skipped = sum(1 for s in states.values() if s == SKIPPED)
    unchanged = len(plan.unchanged)
    text = (f"done: {sent} dataset(s) sent and verified, {skipped - unchanged} already there"
            + (f", {unchanged} unchanged (left at the copy's newest snapshot)" if unchanged
               else "") + "; "
            f"{format_size(summary.bytes)} in {summary.seconds:.1f} s; the copy is "
            f"{plan.destination_host}:{plan.destination} at @{plan.snapshot}")
    since = summary.extra.get("source_readonly_since")
    if since is not None:
        window = float(summary.extra.get("readonly_seconds", 0.0))
        text += ("\nfinal sync: the source has been read-only since "
                 f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(float(since)))} "
                 f"({window:.1f} s until the copy was checked), so the copy is exactly the "
                 "source at that snapshot (zfs set readonly=off to undo)")
    if plan.vanished:
        text += "\ngone from the source, kept on the destination: " + ", ".join(plan.vanished)
    text += own_roots_advice(summary.extra.get("own_encryption_roots", {}), "\n")
    return text


def own_roots_advice(own: dict[str, str], sep: str) -> str:
    """`own_roots_lines`, each after `sep` ("" for none)."""
    return "".join(sep + line for line in own_roots_lines(own))


def own_roots_lines(own: dict[str, str]) -> list[str]:
    """What to run so copies that became encryption roots of their own use their parent's key
    again, as on the source (needs the keys loaded, so zmigrate cannot do it for the user)."""
    if not own:
        return []
    return [f"encrypted: {len(own)} dataset(s) of the copy are encryption roots of their own "
            "(each arrived in its own raw stream) while on the source they use an ancestor's "
            "key. Once the keys are loaded (zfs load-key -r), re-join them:",
            *(f"  zfs change-key -i {cmdline.join([ds])}   # use {parent}'s key"
              for ds, parent in sorted(own.items()))]
