#!/usr/bin/env python3
"""Render app/factdesk/desktop_data/icons/factdesk.svg to the PNG sizes desktops use and to a Windows .ico.

    python packaging/make_icons.py        (make icons; needs only PySide6, offscreen)

Writes app/factdesk/desktop_data/icons/factdesk-<N>.png for N in SIZES (the freedesktop hicolor sizes, 16 to
512) and factdesk.ico (16-256, PNG-compressed entries, read by Windows Vista and later).
macOS's .icns is made on a Mac from the same PNGs with iconutil (docs/packaging.md).
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parents[1] / "app" / "factdesk" / "desktop_data" / "icons"
SVG = ICONS / "factdesk.svg"
SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)


def render(renderer: QSvgRenderer, size: int) -> bytes:
    """The icon at `size` x `size` pixels as PNG bytes (antialiased, transparent corners)."""
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise SystemExit(f"could not encode the {size} px icon as PNG")
    return bytes(data.data())


def ico(pngs: dict[int, bytes]) -> bytes:
    """An ICO file whose entries are the given PNGs (the format allows PNG payloads)."""
    header = struct.pack("<HHH", 0, 1, len(pngs))
    offset = len(header) + 16 * len(pngs)
    entries, payload = b"", b""
    for size, png in sorted(pngs.items()):
        side = 0 if size >= 256 else size  # 0 means 256 in an ICO directory entry
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset + len(payload))
        payload += png
    return header + entries + payload


def main() -> int:
    _app = QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        raise SystemExit(f"{SVG} is not a valid SVG")
    pngs = {size: render(renderer, size) for size in SIZES}
    for size, png in pngs.items():
        (ICONS / f"factdesk-{size}.png").write_bytes(png)
    (ICONS / "factdesk.ico").write_bytes(ico({s: pngs[s] for s in ICO_SIZES}))
    print(f"wrote {len(pngs)} PNGs ({', '.join(map(str, SIZES))} px) and factdesk.ico to {ICONS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
