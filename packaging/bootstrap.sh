#!/usr/bin/env bash
# Set up zmigrate on a fresh Debian 12 machine, then launch the app or run the tests.
#
#   packaging/bootstrap.sh app     system packages (sudo), the venv, then the wizard
#   packaging/bootstrap.sh test    the same plus the test lab's packages, then every test (as root)
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-app}"
shift || true

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

# Runtime: ssh client, the Qt platform libraries PySide6 needs, mbuffer for local transfers.
APP_PKGS=(python3 python3-venv openssh-client mbuffer pv iproute2 util-linux
  libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-image0
  libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xinerama0
  libxcb-xfixes0 libxcb-xkb1 libdbus-1-3 libfontconfig1 libglib2.0-0 fonts-dejavu-core
  libnotify-bin)
# The real test lab: ZFS in userspace, two sshd, Xvfb for screenshots, desktop file validators.
# socat: the lab hosts' end of the private transport (openssl's s_client/s_server the fallback);
# tcpdump: the capture that finds no plaintext of a private transfer on the lab's link.
TEST_PKGS=(zfs-fuse openssh-server sudo xvfb xauth procps desktop-file-utils appstream
  iputils-ping ethtool socat tcpdump
  librsvg2-bin imagemagick)

pkgs=("${APP_PKGS[@]}")
[ "$what" = "test" ] && pkgs+=("${TEST_PKGS[@]}")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  /usr/bin/python3 -m venv .venv
fi
stamp=.venv/.zmigrate-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ requirements/package.txt -nt "$stamp" ]
then
  echo "== installing zmigrate into .venv"
  .venv/bin/pip install -q --upgrade pip
  # Everything (the wizard, the tests, the pinned linters), at the versions the frozen app and
  # the .deb ship: requirements/package.txt's pins as constraints (without its hashes, which
  # would demand one for every package), so the tests test what ships.
  sed -n 's/^\([A-Za-z0-9_.-]*==[^ ]*\).*/\1/p' requirements/package.txt > .venv/constraints.txt
  .venv/bin/pip install -q -e ".[gui,test,dev]" -c .venv/constraints.txt
  touch "$stamp"
fi

case "$what" in
  app)
    exec .venv/bin/zmigrate "$@"
    ;;
  test)
    if [ "$(id -u)" -ne 0 ]; then
      echo "the tests need root (zfs-fuse pools, sshd): run: sudo $0 test" >&2
      exit 2
    fi
    .venv/bin/ruff check zmigrate tests bench packaging
    .venv/bin/mypy
    .venv/bin/python packaging/gen_qt.py --check
    export QT_QPA_PLATFORM=offscreen
    # The slowest tests are named at the end, where CI's log keeps them: its time is budgeted.
    exec .venv/bin/python -m pytest --durations=25 "$@"
    ;;
  *)
    echo "usage: $0 app|test [args...]" >&2
    exit 2
    ;;
esac
