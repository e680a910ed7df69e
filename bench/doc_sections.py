"""Shared by the benchmark scripts: replace one `## ` section of a markdown document."""

from __future__ import annotations

from pathlib import Path


def replace_section(doc: Path, heading: str, text: str) -> None:
    """Drop the section titled `heading` (up to the next `## `), then append `text` at the end."""
    old = doc.read_text(encoding="utf-8") if doc.exists() else ""
    start = old.find(heading)
    if start >= 0:
        nxt = old.find("\n## ", start + len(heading))
        old = old[:start].rstrip("\n") + ("\n\n" + old[nxt + 1:] if nxt >= 0 else "")
    doc.write_text(old.rstrip("\n") + "\n\n" + text.rstrip("\n") + "\n", encoding="utf-8")
