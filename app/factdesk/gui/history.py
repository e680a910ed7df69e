"""Back/forward through the facts visited (Alt+Left / Alt+Right), as a browser does."""

from __future__ import annotations


class VisitHistory:
    """Fact ids visited, and where in them the user stands."""

    def __init__(self) -> None:
        self._ids: list[int] = []
        self._pos = -1

    def visit(self, fact_id: int) -> None:
        """A fact shown by the user's choice: forward history is dropped."""
        if self._ids and self._ids[self._pos] == fact_id:
            return
        del self._ids[self._pos + 1:]
        self._ids.append(fact_id)
        self._pos = len(self._ids) - 1

    def step(self, delta: int) -> int | None:
        """Move back (-1) or forward (+1); the fact to show, or None at either end."""
        pos = self._pos + delta
        if not 0 <= pos < len(self._ids):
            return None
        self._pos = pos
        return self._ids[pos]
