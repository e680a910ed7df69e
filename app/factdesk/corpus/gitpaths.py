"""The paths git refuses to check out on some platform (issue 22 #5).

A tree entry git's `verify_path` refuses (read-cache.c) makes `git clone` or `checkout` of
the branch fail for everyone on that platform ("invalid path"), and `.git` in any spelling a
file system takes for `.git` writes into the repository's own control folder. factdesk
never writes, accepts or brings in such a path, whatever a curator overrides. The rules are
git's with both `core.protectNTFS` and `core.protectHFS` on (each is on by default on its own
platform; a shared remote meets every platform), plus what Git for Windows refuses in any
name (`is_valid_win32_path`): so a path is refused when

- it is empty, absolute, has an empty, `.` or `..` component, or ends in `/`;
- a component is `.git` to HFS+ (case-insensitive, ignoring the code points HFS+ ignores:
  U+200C–U+200F, U+202A–U+202E, U+206A–U+206F, U+FEFF) or to NTFS (`.git` or its 8.3 name
  `git~1`, in any case, followed only by spaces and dots, or by an alternate data stream
  `:…`); for a symbolic link, `.gitmodules` to either (`gitmod~1`);
- a component holds a character Windows does not allow (`< > : " | ? *`, `\\`, U+0001–
  U+001F), ends in a space or a dot, or is a reserved device name (CON, PRN, AUX, NUL,
  COM1–9, LPT1–9, CONIN$, CONOUT$, with any extension), or the path starts with a drive
  letter (`C:`).
"""

from __future__ import annotations

import re

#: the code points HFS+ ignores when it compares names (git's utf8.c `next_hfs_char`)
_HFS_IGNORED = dict.fromkeys([0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F),
                              *range(0x206A, 0x2070), 0xFEFF])
_WINDOWS_CHARS = re.compile(r'[<>:"|?*\\\x01-\x1f]')
_RESERVED = re.compile(r"(con|prn|aux|nul|com[1-9]|lpt[1-9]|conin\$|conout\$)( *\..*)?",
                       re.IGNORECASE)

#: a path every rule below takes, told at once (5,500 proposals' paths cost 0.5 s one by
#: one): components of ASCII letters, digits, `_` and `-`, dot-separated, starting with
#: neither a dot nor `-`, none a device name — no `.git` spelling, no character, ending or
#: name Windows refuses can be in it (`tests/review/test_git_paths.py` holds it to them)
_NAME = r"(?!(?:con|prn|aux|nul|com[1-9]|lpt[1-9])(?:[./]|$))[A-Za-z0-9_][A-Za-z0-9_-]*" \
        r"(?:\.[A-Za-z0-9_-]+)*"
_PLAIN = re.compile(rf"{_NAME}(?:/{_NAME})*", re.IGNORECASE)


def _hfs_is(component: str, name: str) -> bool:
    """HFS+ reads `component` as `name` (git's `is_hfs_dot_generic`: ASCII case folded, the
    ignored code points skipped)."""
    folded = component.translate(_HFS_IGNORED)
    return folded.isascii() and folded.lower() == name


def _only_spaces_and_dots(rest: str) -> bool:
    """What may follow a name NTFS still reads as that name (up to a stream's `:`)."""
    return not rest.split(":", 1)[0].strip(" .")


def _ntfs_is_dotgit(component: str) -> bool:
    """NTFS reads `component` as `.git` (git's `is_ntfs_dotgit`): `.git` or `git~1`, any
    case, then only spaces and dots."""
    low = component.lower()
    return any(low.startswith(n) and not low[len(n):].strip(" .") for n in (".git", "git~1"))


def _ntfs_is_dotgitmodules(component: str) -> bool:
    """NTFS reads `component` as `.gitmodules` (git's `is_ntfs_dot_generic` with the short
    names `gitmod~1`–`~4` and the fall-back `gi7eba~N`)."""
    low = component.lower()
    if low.startswith(".gitmodules"):
        return _only_spaces_and_dots(low[len(".gitmodules"):])
    if re.match(r"gitmod~[1-4]", low):
        return _only_spaces_and_dots(low[8:])
    short = re.match(r"(g(?:i(?:7(?:e(?:b(?:a)?)?)?)?)?)~[1-9][0-9]*", low)
    return bool(short and len(short.group(0)) <= 8 and "gi7eba".startswith(short.group(1))
                and _only_spaces_and_dots(low[short.end():]))


def git_refuses(path: str, *, symlink: bool = False, windows: bool = True) -> str | None:
    """Why git refuses `path` on some platform (in words), or None when every git takes it.
    `windows=False`: only the rules that guard the repository itself (empty, absolute and
    dot components, `.git` in any spelling, a drive letter) — what a curator's own commit
    of a name already in the history is held to; a name Windows alone cannot hold is
    refused where it would come in (review, accept), not where a curator removes or
    restores it."""
    if _PLAIN.fullmatch(path):
        return None
    if not path:
        return "an empty path"
    if re.match(r"[A-Za-z]:", path):
        return "a Windows drive letter"
    if path.startswith("/"):
        return "an absolute path"
    for part in path.split("/"):
        if part in ("", ".", ".."):
            return f"a component {part!r} (empty, '.' or '..')"
        if _hfs_is(part, ".git") or _ntfs_is_dotgit(part):
            return f"{part!r} is git's own folder `.git` on NTFS or HFS+, in any case"
        if symlink and (_hfs_is(part, ".gitmodules") or _ntfs_is_dotgitmodules(part)):
            return f"{part!r} as a symbolic link is `.gitmodules` on NTFS or HFS+"
        if not windows:
            continue
        if _WINDOWS_CHARS.search(part):
            return f"{part!r} holds a character Windows does not allow in a name"
        if part.endswith((" ", ".")):
            return f"{part!r} ends in a space or a dot (Windows drops it)"
        if _RESERVED.fullmatch(part):
            return f"{part!r} is a device name on Windows"
    return None
