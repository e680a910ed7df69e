"""Reference classification, knomit's `ClassifyRef` (FORMAT.md §4.1), plus containment."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import StrEnum

_KB_RE = re.compile(r"^kb://([0-9a-fA-F]{12})/(.+)$")
#: a one-letter "scheme" is a Windows drive (`C:\\x`, `c:foo`), not a URL (RELIABILITY C02/C03)
DRIVE_RE = re.compile(r"^[A-Za-z]:")
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_HEX12 = re.compile(r"^[0-9a-f]{12}$")
_LINES = re.compile(r"#L\d+(-L\d+)?$")


class RefKind(StrEnum):
    LOCAL_FACT = "local_fact"
    FOREIGN_FACT = "foreign_fact"
    SOURCE_CODE = "source_code"
    EXTERNAL_URL = "external_url"
    MALFORMED = "malformed"


@dataclass(frozen=True, slots=True)
class Ref:
    raw: str
    kind: RefKind
    #: For local facts: the repo-relative path, lower-cased for lookup.
    target: str | None = None
    warning: str | None = None


RepoIds = str | frozenset[str] | None


def _ids(repo_id: RepoIds) -> frozenset[str]:
    if repo_id is None:
        return frozenset()
    return frozenset({repo_id}) if isinstance(repo_id, str) else repo_id


@functools.lru_cache(maxsize=1 << 16)
def classify_ref(raw: str, repo_id: RepoIds) -> Ref:
    """Classify one ref string exactly in knomit's order.

    `repo_id` is this repository's id: knomit's root-commit prefix, and also the
    `knomit-repo-nonce` of the init commit where one is recorded (both name this repo).
    Memoised (a `Ref` is immutable): the rules ask again for the same refs of each fact,
    and many facts cite the same ones.
    """
    if raw == "":
        return Ref(raw, RefKind.MALFORMED, warning="empty ref")
    if raw.startswith("kb://"):
        m = _KB_RE.match(raw)
        if not m:
            return Ref(raw, RefKind.MALFORMED, warning=f"malformed kb:// ref {raw!r}")
        rid, path = m.group(1).lower(), m.group(2)
        if rid in _ids(repo_id):
            return Ref(raw, RefKind.LOCAL_FACT, target=path.lower())
        return Ref(raw, RefKind.FOREIGN_FACT, target=path)
    if raw.startswith("src://"):
        return _classify_src(raw)
    if _SCHEME_RE.match(raw):
        return Ref(raw, RefKind.EXTERNAL_URL)
    return Ref(raw, RefKind.LOCAL_FACT, target=raw.lower())


def _classify_src(raw: str) -> Ref:
    rest = raw[len("src://") :]
    rest = _LINES.sub("", rest)
    version = None
    if "@" in rest:
        rest, version = rest.rsplit("@", 1)
    repo, _, path = rest.partition("/")
    if not repo or not path:
        return Ref(raw, RefKind.MALFORMED, warning=f"malformed src:// ref {raw!r}")
    if version is not None and ":" in version and _HEX12.match(repo):
        commit, blob = version.split(":", 1)
        if not (_HEX40.match(commit) and _HEX40.match(blob)):
            return Ref(raw, RefKind.SOURCE_CODE, warning=f"src:// commit/blob must be 40 hex: {raw!r}")
    return Ref(raw, RefKind.SOURCE_CODE)


def local_targets(refs: tuple[str, ...], repo_id: RepoIds) -> list[str]:
    """The local fact paths a fact cites, de-duplicated, in order."""
    seen: dict[str, None] = {}
    for raw in refs:
        ref = classify_ref(raw, repo_id)
        if ref.kind is RefKind.LOCAL_FACT and ref.target is not None:
            seen.setdefault(ref.target, None)
    return list(seen)


def uncontained(path: str) -> tuple[str, str] | None:
    """Why a local ref's path is not safely inside the repository, as (code, words), or None
    (RELIABILITY C01–C03): `ref-absolute` (`/etc/passwd`, a UNC `\\\\srv\\share`),
    `ref-syntax` (a backslash, a NUL byte, an empty or `.` segment) or `ref-traversal` (`..`)."""
    if is_contained_repo_path(path):
        return None
    if path.startswith(("/", "\\")):
        return "ref-absolute", "is an absolute path"
    parts = path.replace("\\", "/").split("/")
    if ".." in parts:
        return "ref-traversal", "leaves the repository"
    return "ref-syntax", "is not a clean repo path (a backslash, a NUL byte, or an empty or '.' part)"


def is_contained_repo_path(path: str) -> bool:
    """True when a local ref names a path safely inside the repository (RELIABILITY C01–C04)."""
    if not path or "\x00" in path or "\\" in path or path.startswith("/"):
        return False
    if re.match(r"^[A-Za-z]:", path):
        return False
    parts = path.split("/")
    return all(part not in ("", ".", "..") for part in parts)


def unwritable(raw: str, repo_id: RepoIds) -> str | None:
    """Why a ref may not be newly written into a fact, or None: malformed (knomit's write
    gate refuses it, FORMAT §4.3), a local file or Windows path, or a repo path that leaves
    the repository (the checker's C01–C03). Whether a local target exists is the caller's
    question (it needs the corpus: §4.4)."""
    ref = classify_ref(raw, repo_id)
    if ref.warning:
        return ref.warning
    if ref.kind is RefKind.EXTERNAL_URL and (raw.lower().startswith("file:") or DRIVE_RE.match(raw)):
        return "a local file or a Windows path; refs are repo paths or URLs"
    if ref.kind is RefKind.LOCAL_FACT and ref.target is not None and (why := uncontained(ref.target)):
        return why[1]
    return None
