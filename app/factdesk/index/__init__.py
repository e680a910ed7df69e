"""factdesk.index: the SQLite cache of the corpus (facts, FTS5, problems, history).

Layers above it never import sqlite3 (the `sql-in-its-room` contract): they are handed
connections, call this package's functions, and catch `DatabaseError` by this name.
"""

from sqlite3 import Error as DatabaseError

__all__ = ["DatabaseError"]
