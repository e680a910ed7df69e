"""Layer rules (STYLE.md §2): a pure model, Qt only in the GUI, no unsafe YAML loads."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "app" / "factdesk"


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
    return out


def modules(sub: str = "") -> list[Path]:
    return sorted((PKG / sub).rglob("*.py"))


def test_model_is_pure() -> None:
    banned = ("PySide6", "sqlite3", "sqlite_utils", "git", "torch", "yaml", "subprocess",
              "factdesk.corpus", "factdesk.index", "factdesk.gui", "os", "pathlib")
    for path in modules("model"):
        bad = {m for m in imports(path) if m.split(".")[0] in banned or m.startswith(banned)}
        assert not bad, f"{path.name} imports {bad}"


def test_qt_only_in_gui() -> None:
    for path in modules():
        if "gui" in path.relative_to(PKG).parts:
            continue
        assert not {m for m in imports(path) if m.startswith("PySide6")}, path


def test_gui_imported_only_by_the_entry_point() -> None:
    for path in modules():
        rel = path.relative_to(PKG)
        if "gui" in rel.parts or rel.as_posix() == "cli/__init__.py":
            continue
        assert not {m for m in imports(path) if m.startswith("factdesk.gui")}, path


def test_no_unsafe_yaml_loading() -> None:
    for path in modules():
        text = path.read_text("utf-8")
        assert "yaml.unsafe_load" not in text and "FullLoader" not in text
        assert "Loader=yaml.Loader" not in text, path
