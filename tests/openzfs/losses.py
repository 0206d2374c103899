"""The invariant "nothing lost unseen" (lab.losses) on the guest's destination: the same
LossWatch, reading dstpool over ssh in one command (datasets, snapshots, and the files of each
mounted filesystem, not crossing into other mounts)."""

from __future__ import annotations

from lab.losses import DestinationState, LossWatch

from .vm import Vm


def guest_state(vm: Vm, root: str) -> DestinationState:
    """`root` and everything under it on the guest, as it is now (nothing if it is absent)."""
    script = f"""
L=$(zfs list -H -r -t filesystem,volume,snapshot -o name,mounted,mountpoint {root} 2>/dev/null) \\
  || exit 0
printf '%s\\n' "$L" | sed 's/^/L\\t/'
printf '%s\\n' "$L" | while IFS=$'\\t' read -r n m p; do
  if [ "$m" = yes ] && [ -d "$p" ]; then
    find "$p" -xdev -path "$p/.zfs" -prune -o -type f -printf "F\\t$n\\t%P\\n"
  fi
done
"""
    datasets: set[str] = set()
    snapshots: set[str] = set()
    files: dict[str, set[str]] = {}
    for line in vm.ssh(script, timeout=300).stdout.splitlines():
        what, name, rest = line.split("\t", 2)
        if what == "F":
            files[name].add(rest)
        elif "@" in name:
            snapshots.add(name)
        else:
            datasets.add(name)
            mounted, mountpoint = rest.split("\t")
            if mounted == "yes" and mountpoint.startswith("/"):
                files[name] = set()
    return DestinationState(frozenset(datasets), frozenset(snapshots),
                            {k: frozenset(v) for k, v in files.items()})


class GuestLossWatch(LossWatch):
    """LossWatch around an operation whose destination is the guest's `root`."""

    def __init__(self, vm: Vm, root: str) -> None:
        super().__init__(root)
        self.vm = vm

    def read(self) -> DestinationState:
        return guest_state(self.vm, self.root)
