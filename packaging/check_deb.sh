#!/usr/bin/env bash
# Install the .deb as a user would, check it from the installed paths, remove and purge it,
# and check that nothing of it is left. As root (CI); it refuses to touch an installed zmigrate.
#
#   packaging/check_deb.sh [DEB]     default: the newest dist/zmigrate_*_<arch>.deb
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "check_deb.sh: installs a package: run it as root (sudo $0)" >&2
  exit 2
fi
bash packaging/need-debs.sh check_deb.sh desktop-file-utils appstream
APP_ID=io.github.zmigrate.Zmigrate
deb="${1:-$(ls dist/zmigrate_*_"$(dpkg --print-architecture)".deb 2>/dev/null | sort -V | tail -1)}"
[ -f "$deb" ] || { echo "check_deb.sh: no .deb: run packaging/build_deb.sh" >&2; exit 1; }
case "$deb" in /*|./*) ;; *) deb="./$deb" ;; esac  # apt-get reads a path, not a name
version="$(dpkg-deb -f "$deb" Version)"
if dpkg-query -W -f='${Status}' zmigrate 2>/dev/null | grep -q "install ok installed"; then
  echo "check_deb.sh: zmigrate is already installed here; not replacing it" >&2
  exit 1
fi

# Everything the package may put on the system; each must exist once installed and be gone
# after the purge (with /opt/zmigrate, where a .deb of other projects puts such apps).
PATHS=(/usr/lib/zmigrate /usr/bin/zmigrate "/usr/share/applications/$APP_ID.desktop"
  "/usr/share/metainfo/$APP_ID.metainfo.xml" "/usr/share/icons/hicolor/scalable/apps/$APP_ID.svg"
  "/usr/share/icons/hicolor/256x256/apps/$APP_ID.png" /usr/share/doc/zmigrate
  /usr/share/man/man1/zmigrate.1.gz /usr/share/lintian/overrides/zmigrate)

fail() { echo "check_deb.sh: $*" >&2; exit 1; }

echo "== apt-get install -y $deb"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb" | grep -E "^(Setting up|Unpacking)" || true
dpkg-query -W -f='${Status} ${Version}\n' zmigrate | grep -qx "install ok installed $version" ||
  fail "zmigrate $version is not installed after apt-get install"
for p in "${PATHS[@]}"; do [ -e "$p" ] || fail "$p is missing after the install"; done

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# From a folder with no source in it, with a home of its own: only the installed files count.
cd "$scratch"
export HOME="$scratch" XDG_CONFIG_HOME="$scratch/.config" XDG_DATA_HOME="$scratch/.local/share"

echo "== $(command -v zmigrate) --version"
[ "$(command -v zmigrate)" = /usr/bin/zmigrate ] || fail "zmigrate on PATH is $(command -v zmigrate)"
out="$(/usr/bin/zmigrate --version)"
echo "$out"
[ "$out" = "zmigrate $version" ] || fail "--version printed '$out', not 'zmigrate $version'"

echo "== QT_QPA_PLATFORM=offscreen zmigrate --self-test"
out="$(QT_QPA_PLATFORM=offscreen timeout 120 /usr/bin/zmigrate --self-test 2>&1)" || {
  echo "$out" >&2
  fail "the installed app's --self-test failed"
}
echo "$out"
grep -qx "self-test ok" <<<"$out" || fail "no 'self-test ok' line"
if grep -qE "ImportError|ModuleNotFoundError|Fatal Python error|could not load the Qt platform" \
    <<<"$out"; then
  fail "the self-test printed a fatal marker"
fi

echo "== zmigrate history (the CLI, from the installed path)"
/usr/bin/zmigrate history >/dev/null || fail "zmigrate history failed"

echo "== desktop-file-validate /usr/share/applications/$APP_ID.desktop"
out="$(desktop-file-validate "/usr/share/applications/$APP_ID.desktop" 2>&1)" ||
  fail "desktop-file-validate: $out"
[ -z "$out" ] || { echo "$out"; grep -qi error <<<"$out" && fail "desktop-file-validate: errors"; }
grep -qx "Exec=zmigrate" "/usr/share/applications/$APP_ID.desktop" || fail "Exec= is not zmigrate"
grep -qx "Icon=$APP_ID" "/usr/share/applications/$APP_ID.desktop" || fail "Icon= is not $APP_ID"

echo "== appstreamcli validate --no-net /usr/share/metainfo/$APP_ID.metainfo.xml"
appstreamcli validate --no-net "/usr/share/metainfo/$APP_ID.metainfo.xml" ||
  fail "appstreamcli validate failed"

cd /
echo "== apt-get remove -y zmigrate"
DEBIAN_FRONTEND=noninteractive apt-get remove -y -q zmigrate | grep -E "^Removing" || true
# The package has no conffiles, so remove leaves nothing to purge and apt-get no longer knows
# the (local) package; purge whatever dpkg still holds, then check that it holds nothing.
if dpkg-query -W -f='${Status}' zmigrate 2>/dev/null | grep -q "config-files"; then
  echo "== apt-get purge -y zmigrate"
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -q zmigrate | grep -E "^Purging" || true
else
  echo "== purge: nothing to purge (dpkg: $(dpkg-query -W -f='${Status}' zmigrate 2>/dev/null ||
    echo "no such package"))"
fi
if dpkg-query -W -f='${Status}' zmigrate 2>/dev/null | grep -qv "not-installed"; then
  fail "dpkg still knows zmigrate: $(dpkg-query -W -f='${Status}' zmigrate)"
fi
left=()
for p in "${PATHS[@]}" /opt/zmigrate; do [ -e "$p" ] || [ -L "$p" ] && left+=("$p"); done
[ ${#left[@]} -eq 0 ] || fail "left behind after the purge: ${left[*]}"
echo "== check_deb.sh: $deb installed, ran (--version, --self-test, history), validated" \
  "(.desktop, metainfo), removed and purged: nothing left"
