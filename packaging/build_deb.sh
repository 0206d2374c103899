#!/usr/bin/env bash
# Build dist/zmigrate_<version>_<arch>.deb from the frozen app in dist/zmigrate/ (run
# packaging/build.sh first) with Debian's own tools, then check it with lintian.
#
#   packaging/build_deb.sh        prints the .deb's size and lintian's verdict
#
# What it installs:
#   /usr/lib/zmigrate/            the frozen app. Not /opt: Debian Policy 9.1.1 keeps packages
#                                 out of /opt (lintian: dir-or-file-in-opt, an error), and
#                                 /usr/lib/PACKAGE is the FHS place for a program's private files.
#   /usr/bin/zmigrate             a symlink to ../lib/zmigrate/zmigrate (PyInstaller's
#                                 bootloader finds its folder through /proc/self/exe)
#   /usr/share/applications/      the menu entry; /usr/share/icons/hicolor/ the icons;
#   /usr/share/metainfo/          the AppStream metainfo; /usr/share/man/man1/ zmigrate.1
#   /usr/share/doc/zmigrate/      copyright and changelog (packaging/debian/)
# Depends: what the frozen app's binaries link from the system (dpkg-shlibdeps over every ELF
# file: glibc, libstdc++, X11/xcb, Wayland, fontconfig, D-Bus, OpenSSL...), the commands
# zmigrate runs (openssh-client; mbuffer for same-host transfers) and a font. Recommends: pv,
# and libnotify-bin (notify-send: desktop notifications where there is no tray).
# The version is the frozen app's (`zmigrate --version`); packaging/debian/changelog must have
# an entry for it. SOURCE_DATE_EPOCH (default: the last commit's time) fixes every timestamp.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

# dpkg-shlibdeps resolves each library to the installed package that provides it, so every
# library the bundle links must be installed here: the Wayland client libraries too.
bash packaging/need-debs.sh build_deb.sh dpkg-dev lintian help2man file \
  libwayland-client0 libwayland-cursor0 libwayland-egl1 libxkbcommon-x11-0 libxcb-cursor0 \
  libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 \
  libxcb-shape0 libxcb-xinerama0 libxcb-xfixes0 libxcb-xkb1 libegl1 libgl1 libfontconfig1 \
  libdbus-1-3 libglib2.0-0

app=dist/zmigrate
[ -x "$app/zmigrate" ] || { echo "build_deb.sh: no $app/zmigrate: run packaging/build.sh" >&2; exit 1; }
version="$("$app/zmigrate" --version | awk '{print $2}')"
arch="$(dpkg --print-architecture)"
APP_ID=io.github.zmigrate.Zmigrate
PREFIX=usr/lib/zmigrate
MAINTAINER="$(sed -n 's/^ -- \(.*>\)  .*/\1/p' packaging/debian/changelog | head -1)"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"

changelog_version="$(sed -n '1s/^zmigrate (\([^)]*\)).*/\1/p' packaging/debian/changelog)"
if [ "$changelog_version" != "$version" ]; then
  echo "build_deb.sh: the app is $version, packaging/debian/changelog's top entry is" \
    "$changelog_version: add an entry for $version" >&2
  exit 1
fi

work=build/deb
stage="$work/debian/zmigrate"  # dpkg-shlibdeps treats files under debian/PACKAGE as this package
rm -rf "$work"
mkdir -p "$stage/DEBIAN" "$stage/$PREFIX" "$stage/usr/bin" "$stage/usr/share/applications" \
  "$stage/usr/share/metainfo" "$stage/usr/share/doc/zmigrate" "$stage/usr/share/man/man1" \
  "$stage/usr/share/lintian/overrides"

cp -a "$app/." "$stage/$PREFIX/"
ln -s "../lib/zmigrate/zmigrate" "$stage/usr/bin/zmigrate"
install -m 644 "resources/$APP_ID.desktop" "$stage/usr/share/applications/"
install -m 644 "resources/$APP_ID.metainfo.xml" "$stage/usr/share/metainfo/"
for png in resources/icons/hicolor/*/apps/"$APP_ID.png"; do
  size="$(basename "$(dirname "$(dirname "$png")")")"
  install -D -m 644 "$png" "$stage/usr/share/icons/hicolor/$size/apps/$APP_ID.png"
done
install -D -m 644 "resources/$APP_ID.svg" "$stage/usr/share/icons/hicolor/scalable/apps/$APP_ID.svg"
install -m 644 packaging/debian/copyright "$stage/usr/share/doc/zmigrate/copyright"
gzip -9n -c packaging/debian/changelog > "$stage/usr/share/doc/zmigrate/changelog.gz"
install -m 644 packaging/debian/lintian-overrides "$stage/usr/share/lintian/overrides/zmigrate"
help2man --no-info --version-string="$version" \
  --name="move ZFS datasets between hosts fast, and see why a transfer is slow" \
  "$app/zmigrate" | gzip -9n > "$stage/usr/share/man/man1/zmigrate.1.gz"

# Modes as Debian wants them: directories and executables 755, everything else 644 (shared
# libraries too: they are mapped, not executed).
find "$stage" -type d -exec chmod 755 {} +
find "$stage" -type f -exec chmod 644 {} +
chmod 755 "$stage/$PREFIX/zmigrate"

# Depends from the ELF files' DT_NEEDED, resolved to installed packages. The bundle's own
# libraries (Qt, Python's) are found under debian/zmigrate and need no package.
mapfile -t elves < <(find "$root/$stage/$PREFIX" -type f -exec file -N --mime-type {} + |
  sed -n 's/: *application\/x-\(sharedlib\|pie-executable\|executable\)$//p' | sort)
mapfile -t libdirs < <(find "$root/$stage/$PREFIX" -name '*.so*' -type f -printf '-l%h\n' |
  sort -u)
mkdir -p "$work/debian"
printf 'Source: zmigrate\n\nPackage: zmigrate\nArchitecture: any\n' > "$work/debian/control"
shlibs="$(cd "$work" && dpkg-shlibdeps -O "${libdirs[@]}" "${elves[@]}" 2> shlibdeps.log |
  sed -n 's/^shlibs:Depends=//p')" || {
  cat "$work/shlibdeps.log" >&2
  echo "build_deb.sh: dpkg-shlibdeps failed" >&2
  exit 1
}
[ -n "$shlibs" ] || { cat "$work/shlibdeps.log" >&2; echo "build_deb.sh: no shlibs" >&2; exit 1; }

installed_kb="$(du -sk --apparent-size "$stage" | cut -f1)"
cat > "$stage/DEBIAN/control" <<EOF
Package: zmigrate
Version: $version
Architecture: $arch
Maintainer: $MAINTAINER
Installed-Size: $installed_kb
Depends: $shlibs, openssh-client, mbuffer, fonts-dejavu-core | fonts-freefont-ttf | fonts-liberation2
Recommends: pv, libnotify-bin
Section: admin
Priority: optional
Homepage: https://github.com/zmigrate/zmigrate
Description: move ZFS datasets between hosts fast, and see why a transfer is slow
 zmigrate copies ZFS snapshots and whole dataset trees from one host to another
 with zfs send, zfs receive and mbuffer on both ends, over SSH or a direct TCP
 stream. A wizard picks the hosts, the snapshot and the destination, shows the
 exact commands before anything runs, and plots the transfer rate and both
 buffers' fill live; every transfer is verified by snapshot guid.
 .
 The same engine is a command-line tool: zmigrate list, send, doctor and
 history.
EOF
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z |
  xargs -0 md5sum > DEBIAN/md5sums)
chmod 644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums"

deb="dist/zmigrate_${version}_${arch}.deb"
rm -f "$deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "== built $deb: $(( $(stat -c %s "$deb") / 1000000 )) MB ($(stat -c %s "$deb") bytes)," \
  "installs $(( installed_kb / 1000 )) MB"
echo "== Depends: $(dpkg-deb -f "$deb" Depends)"

echo "== lintian $deb"
# Errors and warnings fail the build; packaging/debian/lintian-overrides explains each one left.
# Info tags (hardening of the wheels' prebuilt libraries, spelling in their strings) are counted.
if ! lintian --fail-on error,warning --display-info --tag-display-limit 0 "$deb" \
    > "$work/lintian.log" 2>&1; then
  grep -v '^I:' "$work/lintian.log" >&2
  echo "build_deb.sh: lintian found errors or warnings (above; all tags in $work/lintian.log)" >&2
  exit 1
fi
grep -v '^I:' "$work/lintian.log" || true
count() { grep -c "^$1:" "$work/lintian.log" || true; }
echo "== lintian: $(count E) errors, $(count W) warnings, $(count I) info tags" \
  "($(grep '^I:' "$work/lintian.log" | awk '{print $3}' | sort | uniq -c | sort -rn |
    awk '{printf "%s%s %s", sep, $1, $2; sep=", "}')); overridden with reasons:" \
  "$(grep -c '^zmigrate:' packaging/debian/lintian-overrides)"
