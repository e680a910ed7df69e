"""PySide6 views and Qt models over the index; no business rules (DESIGN.md §4).

Importing this package applies one interpreter workaround before any Qt object exists:
on CPython < 3.12 the PySide6 6.12 abi3 wheels return `None` from void methods without
taking a reference (they assume PEP 683's immortal `None`), so every call such as
`QLabel.setText` lowers `None`'s refcount by one until CPython aborts with
"none_dealloc: deallocating None" (often at exit, in a long session mid-run). We give
`None` a practically infinite refcount, which is exactly what Python 3.12 does. The same
happens to `True` and `False` from some bool-returning methods ("bool_dealloc: deallocating
True or False", seen once worker threads and tree widgets came in), so they get the same.
"""

from __future__ import annotations

import sys


def _immortalize_none() -> None:
    if sys.version_info >= (3, 12):
        return
    import ctypes

    for obj in (None, True, False):
        refcount = ctypes.c_ssize_t.from_address(id(obj))
        refcount.value += 1 << 40


_immortalize_none()
