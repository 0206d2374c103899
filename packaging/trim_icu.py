#!/usr/bin/env python3
"""Rebuild PySide6's libicudata.so.NN with only the ICU data Qt can use in zmigrate.

PySide6's Qt links ICU, whose data library is 31 MB: every locale's names of currencies,
languages, units and regions, line-break dictionaries for Thai, Khmer and CJK, transliterators,
spell-out rules and ~200 legacy converters. Qt 6 calls ICU only for collation (QCollator),
time-zone display names (QTimeZone), case mapping with a locale (QLocale::toUpper) and
QStringConverter's non-Unicode codecs; zmigrate's text is English and UTF-8.

Kept: every item ICU needs to work at all (root and pool bundles, supplemental data, time-zone
rules, normalization, property names), collation, time-zone and region names for root and
English, and the small single-byte converters (Latin-N, Windows code pages, KOI8...). Dropped:
the directories brkitr, curr, lang, rbnf, translit, unit; other languages' bundles (ICU falls
back to English names and the root collation); the large multi-byte converters (CJK, EBCDIC
DBCS). The result is about 3.7 MB.

    trim_icu.py LIBICUDATA OUT_DIR    writes OUT_DIR/libicudata.so.NN, prints the sizes

Needs icupkg (Debian: icu-devtools) and a C compiler driver (cc) for the assembler and linker.
The data symbol, icudtNN_dat, is the library's only export; the new library has the same
name and soname, so libicuuc finds it as before.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

LOCALE = re.compile(r"^[a-z]{2,3}(_[A-Za-z0-9]*)*$")
KEEP_LOCALES = {"en", "en_US", "en_US_POSIX", "en_001", "res_index"}
DROP_DIRS = {"brkitr", "curr", "lang", "rbnf", "translit", "unit"}
MAX_CONVERTER = 32 * 1024
_DEPENDS = re.compile(r"Item (\S+) depends on missing item")


def _elf_symbol(data: bytes, name: str) -> tuple[int, int]:
    """(file offset, size) of the exported object NAME in a little-endian ELF64 library."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise SystemExit("trim_icu: not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    for _name, kind, _fl, _addr, off, size, link, _info, _al, entsize in sections:
        if kind != 11:  # SHT_DYNSYM
            continue
        strtab = sections[link]
        for k in range(size // entsize):
            st_name, _i, _o, shndx, value, st_size = struct.unpack_from(
                "<IBBHQQ", data, off + k * entsize)
            end = data.index(b"\0", strtab[4] + st_name)
            if data[strtab[4] + st_name:end].decode() != name:
                continue
            sec = sections[shndx]
            return sec[4] + value - sec[3], st_size
    raise SystemExit(f"trim_icu: no symbol {name}")


def _dropped(item: str, size: int) -> bool:
    folder, _, base = item.rpartition("/")
    stem, _, ext = base.rpartition(".")
    if folder in DROP_DIRS:
        return True
    if ext == "res":
        return bool(LOCALE.match(stem)) and stem not in KEEP_LOCALES
    return ext == "cnv" and size > MAX_CONVERTER


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: trim_icu.py LIBICUDATA OUT_DIR", file=sys.stderr)
        return 2
    lib, out_dir = Path(argv[0]), Path(argv[1])
    for tool in ("icupkg", "cc"):
        if shutil.which(tool) is None:
            print(f"trim_icu: {tool} is missing (apt-get install icu-devtools gcc)",
                  file=sys.stderr)
            return 1
    m = re.fullmatch(r"libicudata\.so\.(\d+)", lib.name)
    if not m:
        raise SystemExit(f"trim_icu: {lib.name} is not libicudata.so.NN")
    major = m.group(1)
    package = f"icudt{major}l"  # l: little-endian, ASCII
    raw = lib.read_bytes()
    offset, size = _elf_symbol(raw, f"icudt{major}_dat")
    with tempfile.TemporaryDirectory(prefix="zmigrate-icu-") as tmp_name:
        tmp = Path(tmp_name)
        full = tmp / "in" / f"{package}.dat"
        full.parent.mkdir()
        full.write_bytes(raw[offset:offset + size])
        listing = subprocess.run(["icupkg", "-l", str(full)], check=True,
                                 capture_output=True, text=True).stdout.split()
        extracted = tmp / "items"
        extracted.mkdir()
        (tmp / "all.txt").write_text("\n".join(listing) + "\n")
        subprocess.run(["icupkg", "-d", str(extracted), "-x", str(tmp / "all.txt"), str(full)],
                       check=True, capture_output=True)
        sizes = {i: (extracted / i).stat().st_size for i in listing}
        remove = {i for i in listing if _dropped(i, sizes[i])}
        # The output's name is the package name ICU looks items up under: icudtNNl.
        small = tmp / "out" / f"{package}.dat"
        small.parent.mkdir()
        for _ in range(5):  # drop what depends on a dropped item (windows-936 on ibm-1386...)
            (tmp / "remove.txt").write_text("".join(f"{i}\n" for i in sorted(remove)))
            run = subprocess.run(["icupkg", "-r", str(tmp / "remove.txt"), str(full), str(small)],
                                 capture_output=True, text=True)
            if run.returncode == 0:
                break
            more = set(_DEPENDS.findall(run.stdout + run.stderr)) - remove
            if not more:
                raise SystemExit(f"trim_icu: icupkg failed:\n{run.stdout}{run.stderr}")
            remove |= more
        else:
            raise SystemExit("trim_icu: icupkg kept finding dependent items")
        asm = tmp / "icudata.S"
        asm.write_text(
            "    .section .rodata\n"
            f"    .globl icudt{major}_dat\n"
            f"    .type icudt{major}_dat, @object\n"
            "    .balign 16\n"
            f"icudt{major}_dat:\n"
            f'    .incbin "{small}"\n'
            f"    .size icudt{major}_dat, .-icudt{major}_dat\n"
            '    .section .note.GNU-stack,"",@progbits\n'
        )
        out_dir.mkdir(parents=True, exist_ok=True)
        target = out_dir / lib.name
        subprocess.run(["cc", "-shared", "-nostdlib", "-s", f"-Wl,-soname,{lib.name}",
                        "-Wl,--build-id=none", "-o", str(target), str(asm)], check=True)
        kept = len(listing) - len(remove)
        print(f"trim_icu: {lib.name}: {lib.stat().st_size / 1e6:.1f} MB -> "
              f"{target.stat().st_size / 1e6:.1f} MB ({kept} of {len(listing)} items kept)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
