"""The desktop entry, the AppStream metainfo and the icons are valid and agree with each other."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from zmigrate import __version__

RESOURCES = Path(__file__).resolve().parents[2] / "resources"
APP_ID = "io.github.zmigrate.Zmigrate"
DESKTOP = RESOURCES / f"{APP_ID}.desktop"
METAINFO = RESOURCES / f"{APP_ID}.metainfo.xml"
ICON_SVG = RESOURCES / f"{APP_ID}.svg"
ICON_SIZES = (16, 32, 48, 64, 128, 256, 512)


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: apt-get install desktop-file-utils appstream",
                    pytrace=False)
    return path


def test_desktop_file_validates() -> None:
    proc = subprocess.run([tool("desktop-file-validate"), str(DESKTOP)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "error" not in proc.stdout.lower()


def test_metainfo_validates() -> None:
    proc = subprocess.run([tool("appstreamcli"), "validate", "--no-net", str(METAINFO)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def desktop_entry() -> dict[str, str]:
    entry: dict[str, str] = {}
    for line in DESKTOP.read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            entry[key] = value
    return entry


def test_desktop_and_metainfo_agree() -> None:
    entry = desktop_entry()
    assert entry["Exec"].split()[0] == "zmigrate"
    assert entry["Icon"] == APP_ID
    root = ET.parse(METAINFO).getroot()
    assert root.findtext("id") == APP_ID
    assert root.findtext("launchable") == DESKTOP.name
    assert root.findtext("provides/binary") == "zmigrate"
    releases = [r.get("version") for r in root.iter("release")]
    assert __version__ in releases
    shots = [i.text or "" for i in root.iter("image")]
    assert shots
    assert all(s.startswith("https://raw.githubusercontent.com/zmigrate/zmigrate/main/docs/")
               for s in shots)
    assert root.find("content_rating") is not None


def test_icons() -> None:
    svg = ET.parse(ICON_SVG).getroot()
    assert svg.tag.endswith("svg")
    for size in ICON_SIZES:
        png = RESOURCES / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", png
        width = int.from_bytes(data[16:20], "big")
        height = int.from_bytes(data[20:24], "big")
        assert (width, height) == (size, size), png
