#!/usr/bin/env bash
# The OpenZFS lane: build (if needed) and boot the OpenZFS 2.3 QEMU guest of ../shared/openzfs-vm,
# run `pytest tests/openzfs` against it, and stop the guest again if this script started it.
#
#   packaging/openzfs-lane.sh [--core] [pytest args...]   # as root; ~7 min to build the image from nothing
#
# --core: only the lane's core (tests/openzfs/conftest.py CORE), which CI runs: about 10 min
# on the emulated guest, where the whole lane takes about an hour on a slow machine.
#
# Environment: WORK (default /var/tmp/openzfs-vm), OPENZFS_VM_DIR (default ../shared/openzfs-vm).
# Exit status: pytest's; a guest that cannot be built or booted is a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
export WORK="${WORK:-/var/tmp/openzfs-vm}"
VM_DIR="${OPENZFS_VM_DIR:-$(cd .. && pwd)/shared/openzfs-vm}"
[ -x "$VM_DIR/start.sh" ] || { echo "openzfs-lane: $VM_DIR/start.sh missing (../shared beside the clone?)" >&2; exit 1; }
[ -x .venv/bin/python ] || { echo "openzfs-lane: no .venv: run packaging/bootstrap.sh first" >&2; exit 1; }

started=0
if ! "$VM_DIR/ssh.sh" true >/dev/null 2>&1; then
  echo "== openzfs-lane: building the guest image if needed (log: $WORK/logs)"
  # One retry: a build step can die of a SIGPIPE race (seen once here, rc 141); stamps make
  # the second run resume where the first stopped.
  "$VM_DIR/build.sh" || { echo "== openzfs-lane: build failed, retrying once" >&2; "$VM_DIR/build.sh"; }
  echo "== openzfs-lane: booting the guest"
  "$VM_DIR/start.sh"
  started=1
fi
stop_vm() { if [ "$started" = 1 ]; then "$VM_DIR/stop.sh" || true; fi; }
trap stop_vm EXIT

select=()
if [ "${1:-}" = "--core" ]; then shift; select=(-m openzfs_core); fi
echo "== openzfs-lane: pytest tests/openzfs ${select[*]}"
rc=0
ZMIGRATE_OPENZFS=1 ZMIGRATE_OPENZFS_VM_DIR="$VM_DIR" \
  .venv/bin/python -m pytest tests/openzfs -p no:cacheprovider -ra --durations=15 "${select[@]}" "$@" || rc=$?
exit "$rc"
