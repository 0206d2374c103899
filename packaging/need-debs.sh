#!/usr/bin/env bash
# Make sure Debian packages are installed: as root, install the missing ones (apt-get); as
# anyone else, name them and fail. Used by the packaging scripts for their build tools.
#
#   packaging/need-debs.sh WHO PKG...     WHO is the script that needs them (for the message)
set -euo pipefail
who="$1"
shift
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "$who: missing Debian packages: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "== $who: installing ${missing[*]}"
apt-get update -q >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
  >/dev/null
