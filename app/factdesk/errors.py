"""The errors a user can act on (STYLE.md §13). Everything else is a bug."""


class FactdeskError(Exception):
    """An environment problem with a message a user can act on."""


class CorpusNotFound(FactdeskError):
    """The knowledge-base folder is missing or is not a knomit corpus."""


class FactNotFound(FactdeskError):
    """No fact matches the given id or path."""


class QueryError(FactdeskError):
    """A malformed search query; the message says what and where."""


class IndexBusy(FactdeskError):
    """Another program held the index's write lock past the busy timeout (RELIABILITY F08);
    nothing was changed."""


class IndexUnwritable(FactdeskError):
    """The index's folder (`.git/factdesk`) cannot be written: said in words; the index is
    never taken for a damaged one and moved aside."""


class IndexDiskFull(FactdeskError):
    """The disk holding the index is full (SQLITE_FULL, ENOSPC, or an I/O error with no room
    left): said in words; the index is kept as it was, never taken for a damaged one and
    set aside (RELIABILITY F09, issue 22 #10)."""
