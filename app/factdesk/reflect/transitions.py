"""Transitions over git history: the corpus diffed commit by commit along first-parent main.

`walk(repo, rev_range)` reads the range's first-parent commits oldest first (one `git log`),
reads the blobs it needs through one `git cat-file --batch`, and classifies each fact
change with the pure rules of `factdesk.reflect.model`. `extend(log, repo)` continues a
previous result from its last processed commit; `transitions(repo, rev_range)` is the
plain list.

Cost control: a file's `type:` line is sniffed from its frontmatter, and a file is parsed
in full only when it can take part in a transition (a hypothesis or methodology, a type
change, a deletion, a move, or an observation whose text names a live hypothesis's file).
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from factdesk.corpus import githistory, gitrepo
from factdesk.corpus.codec import parse_fact
from factdesk.corpus.registry_io import load_registry
from factdesk.corpus.scan import is_fact_path
from factdesk.errors import FactdeskError
from factdesk.model.enums import FactType
from factdesk.model.fact import Fact
from factdesk.model.refs import RepoIds, local_targets
from factdesk.model.registry import Registry, agent_id_from_email
from factdesk.reflect.model import (
    CONFIRMED_BY,
    MOVE,
    Claimant,
    CommitInfo,
    State,
    Transition,
    classify_delete,
    classify_modify,
    classify_move,
    confirmation,
    confirms,
    with_methodologies,
)

_TYPE_LINE = re.compile(rb"(?m)^type:[ \t]*[\"']?([A-Za-z0-9_-]+)[\"']?[ \t]*(?:#.*)?$")
_MD_TOKEN = re.compile(rb"[A-Za-z0-9_.-]+\.md\b")
_TRACKED = (FactType.HYPOTHESIS, FactType.METHODOLOGY)


class RangeError(FactdeskError):
    """A revision or range that git cannot resolve."""


@dataclass
class TransitionLog:
    """A result that can be extended: the transitions, where the walk stopped, its state."""

    transitions: list[Transition]
    base: str | None  #: exclusive start of the walk (None: from the root commit)
    head: str | None  #: the last commit processed
    seq: int  #: that commit's position on the first-parent chain
    state: State = field(default_factory=State)
    commits: int = 0  #: commits read (over all runs)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, object]:
        return {"base": self.base, "head": self.head, "seq": self.seq, "commits": self.commits,
                "seconds": round(self.seconds, 3), "state": self.state.as_dict(),
                "transitions": [t.as_dict() for t in self.transitions]}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> TransitionLog:
        items = data.get("transitions") or []
        state = data.get("state") or {}
        return cls([Transition.from_dict(t) for t in items] if isinstance(items, list) else [],
                   _opt_str(data.get("base")), _opt_str(data.get("head")),
                   int(data.get("seq") or 0),  # type: ignore[call-overload]
                   State.from_dict(state if isinstance(state, dict) else {}),
                   int(data.get("commits") or 0),  # type: ignore[call-overload]
                   float(data.get("seconds") or 0.0))  # type: ignore[arg-type]


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)


def transitions(repo: Path, rev_range: str = "HEAD") -> list[Transition]:
    """Every transition in `rev_range` (`TIP` for all history up to TIP, or `BASE..TIP`)."""
    return walk(repo, rev_range).transitions


def walk(repo: Path, rev_range: str = "HEAD") -> TransitionLog:
    """Walk `rev_range` along the tip's first-parent chain and return an extendable log."""
    base, tip = _split_range(repo, rev_range)
    if base is None:
        log = TransitionLog([], None, None, -1)
    else:
        seq = githistory.first_parent_count(repo, base) - 1
        log = TransitionLog([], base, base, seq, _state_at(repo, base))
    return _advance(repo, log, tip)


def extend(log: TransitionLog, repo: Path, until: str = "HEAD") -> TransitionLog:
    """Continue `log` from its last processed commit up to `until`. When history was
    rewritten (the last commit is no longer an ancestor) the range is walked again."""
    tip = _resolve(repo, until)
    if log.head is not None and not gitrepo.is_ancestor(repo, log.head, tip):
        return walk(repo, tip if log.base is None else f"{log.base}..{tip}")
    if log.head == tip:
        return log
    return _advance(repo, log, tip, extending=True)


def _resolve(repo: Path, rev: str) -> str:
    if rev.startswith("-"):
        raise RangeError(f"not a revision: {rev!r}")
    out = githistory.resolve_commit(repo, rev)
    if not out:
        raise RangeError(f"unknown revision {rev!r} in {repo}")
    return out


def _split_range(repo: Path, rev_range: str) -> tuple[str | None, str]:
    if "..." in rev_range:
        raise RangeError(f"symmetric ranges are not supported: {rev_range!r} (use BASE..TIP)")
    if ".." in rev_range:
        base, _, tip = rev_range.partition("..")
        return _resolve(repo, base or "HEAD"), _resolve(repo, tip or "HEAD")
    return None, _resolve(repo, rev_range)


def sniff_type(data: bytes) -> str | None:
    """The `type:` value of a file's frontmatter without parsing it (None: parse to know)."""
    if not data.startswith(b"---"):
        return None
    end = data.find(b"\n---", 3)
    m = _TYPE_LINE.search(data, 0, end if end > 0 else len(data))
    return m.group(1).decode("ascii") if m else None


class _Walker:
    def __init__(self, repo: Path, log: TransitionLog) -> None:
        self.repo = repo
        self.state = log.state
        self.registry: Registry = load_registry(repo)
        self.repo_ids: RepoIds = gitrepo.repo_ids(repo)
        self.reader = _BatchReader(repo)
        self.rev = log.head or "HEAD"  # the commit being read (set per commit)
        self.creators_before: dict[str, str] | None = None
        self.cache: dict[str, bytes] = {}
        self.out: list[Transition] = []
        self.names: dict[bytes, int] = {}  # file names of live hypotheses and methodologies
        for path in [*self.state.hypotheses.values(), *self.state.methodologies.values()]:
            self._name(path, +1)

    # -- helpers -------------------------------------------------------------------
    def _name(self, path: str, delta: int) -> None:
        key = path.rsplit("/", 1)[-1].lower().encode()
        n = self.names.get(key, 0) + delta
        if n > 0:
            self.names[key] = n
        else:
            self.names.pop(key, None)

    def link(self, path: str, fact: Fact | None) -> None:
        """Remember which methodologies a live fact cites (reinforcement, §5.5)."""
        found = self.methodologies(fact)
        if found:
            self.state.links[path] = list(found)
        else:
            self.state.links.pop(path, None)

    def blob(self, blob: str) -> bytes:
        data = self.cache.get(blob) or self.reader.read(blob)
        if data is None:
            raise gitrepo.GitError(f"blob {blob} missing from {self.repo}")
        return data

    @staticmethod
    def parse(path: str, data: bytes) -> Fact | None:
        return parse_fact(path, data).fact

    def author_id(self, email: str, name: str) -> str | None:
        agent = self.registry.agent_for_email(email)
        if agent:
            return agent.id
        return agent_id_from_email(email) or name or None

    def creator_email(self, path: str) -> str | None:
        """Who wrote the file first. Known for files created inside the walk; for the others
        (walks with --since, a fact relabelled into a hypothesis) one pass over the
        history's additions answers them all."""
        email = self.state.creators.get(path)
        if email is None and self.creators_before is None:
            self.creators_before = _creators(self.repo, self.rev)
        if email is None and self.creators_before is not None:
            email = self.creators_before.get(path)
            if email is not None:
                self.state.creators[path] = email
        return email

    def claimant(self, fact: Fact | None, path: str) -> Claimant:
        if fact is None:
            return Claimant()
        env = fact.envelope
        agent = env.claimant_agent_id
        if agent is None and fact.type == FactType.HYPOTHESIS:
            email = self.creator_email(path)
            if email:
                found = self.registry.agent_for_email(email)
                agent = found.id if found else agent_id_from_email(email)
        ctype = env.claimant_type or (self.registry.type_of(agent) if agent else None)
        return Claimant(agent, ctype)

    def methodologies(self, fact: Fact | None) -> tuple[str, ...]:
        if fact is None or not self.state.methodologies:
            return ()
        found = [self.state.methodologies[t] for t in local_targets(fact.refs, self.repo_ids)
                 if t in self.state.methodologies]
        return tuple(found)

    def emit(self, t: Transition, fact: Fact | None) -> None:
        self.out.append(with_methodologies(t, self.methodologies(fact)))

    def track(self, path: str, fact: Fact | None, creator: str | None = None) -> None:
        low = path.lower()
        typ = fact.type if fact else None
        if typ == FactType.HYPOTHESIS:
            if low not in self.state.hypotheses:
                self._name(path, +1)
            self.state.hypotheses[low] = path
            if creator and path not in self.state.creators:
                self.state.creators[path] = creator
            assert fact is not None
            who = self.claimant(fact, path)
            self.state.claims[path] = [who.agent, who.type, fact.title]
        elif low in self.state.hypotheses:
            self.untrack_hypothesis(path)
        if typ == FactType.METHODOLOGY:
            if low not in self.state.methodologies:
                self._name(path, +1)
            self.state.methodologies[low] = path
        elif low in self.state.methodologies:
            self._name(self.state.methodologies.pop(low), -1)
        if fact is None:
            self.state.links.pop(path, None)

    def untrack_hypothesis(self, path: str) -> None:
        real = self.state.hypotheses.pop(path.lower(), None)
        if real is not None:
            self._name(real, -1)
            self.state.confirmers.pop(real, None)
            self.state.creators.pop(real, None)
            self.state.claims.pop(real, None)

    def names_tracked(self, data: bytes) -> bool:
        """Cheap test: does this text name the file of any live hypothesis or methodology?"""
        if not self.names:
            return False
        end = data.find(b"\n---", 3)  # refs live in the frontmatter
        return any(m.group(0).rsplit(b"/", 1)[-1].lower() in self.names
                   for m in _MD_TOKEN.finditer(data, 0, end if end > 0 else len(data)))

    def confirmations(self, fact: Fact, info: CommitInfo, already: Iterable[str] = ()) -> None:
        before = set(already)
        for target in local_targets(fact.refs, self.repo_ids):
            hyp = self.state.hypotheses.get(target)
            if hyp is None or target in before or hyp == fact.path:
                continue
            claim = self.state.claims.get(hyp) or self.claim_at(hyp, f"{info.sha}^")
            self.emit(confirmation(hyp, fact, info, Claimant(claim[0], claim[1]), claim[2] or ""),
                      fact)
            lst = self.state.confirmers.setdefault(hyp, [])
            if fact.path not in lst:
                lst.append(fact.path)

    def claim_at(self, path: str, rev: str) -> list[str | None]:
        """Claimant and title of a hypothesis not seen being written (walks with --since)."""
        data = self.reader.read(f"{rev}:{path}")
        fact = self.parse(path, data) if data is not None else None
        if fact is None:
            return [None, None, ""]
        who = self.claimant(fact, path)
        self.state.claims[path] = [who.agent, who.type, fact.title]
        return self.state.claims[path]

    def drop_confirmer(self, path: str) -> None:
        for hyp, lst in list(self.state.confirmers.items()):
            if path in lst:
                lst.remove(path)
                if not lst:
                    del self.state.confirmers[hyp]

    # -- one commit ----------------------------------------------------------------
    def commit(self, c: gitrepo.Commit, seq: int) -> None:
        info = CommitInfo(c.sha, seq, c.time, self.author_id(c.email, c.author), c.email,
                          c.subject, c.body)
        self.rev = c.sha
        adds: dict[str, str] = {}
        dels: dict[str, str] = {}
        mods: list[gitrepo.Change] = []
        for ch in c.changes:
            if not is_fact_path(ch.path):
                continue
            if ch.status == "A":
                adds[ch.path] = ch.new_blob
            elif ch.status == "D":
                dels[ch.path] = ch.old_blob
            elif ch.status in ("M", "T"):
                mods.append(ch)
        wanted = [*adds.values(), *dels.values()]
        for ch in mods:
            wanted += [ch.old_blob, ch.new_blob]
        self.cache = self.reader.read_many(wanted)
        moves = _pair_moves(dels, adds)
        for old, new in moves:
            self.move(old, new, dels.pop(old), adds.pop(new), info)
        # a hypothesis added in the same commit as an observation citing it must be tracked
        # before that observation is read, whatever the paths' order
        for path, blob in sorted(adds.items(),
                                 key=lambda kv: sniff_type(self.blob(kv[1])) == FactType.OBSERVATION):
            self.add(path, blob, info)
        for ch in mods:
            self.modify(ch, info)
        for path, blob in dels.items():
            self.delete(path, blob, info)
        self.cache = {}

    def add(self, path: str, blob: str, info: CommitInfo) -> None:
        data = self.blob(blob)
        typ = sniff_type(data)
        if typ is not None and typ not in _TRACKED and not self.names_tracked(data):
            return
        fact = self.parse(path, data)
        if fact is None:
            return
        if confirms(fact):
            self.confirmations(fact, info)
        self.track(path, fact, info.author_email)
        self.link(path, fact)

    def modify(self, ch: gitrepo.Change, info: CommitInfo) -> None:
        old_data, new_data = self.blob(ch.old_blob), self.blob(ch.new_blob)
        old_t, new_t = sniff_type(old_data), sniff_type(new_data)
        tracked = (old_t is None or new_t is None or old_t != new_t or old_t in _TRACKED
                   or new_t in _TRACKED)
        cites = self.names_tracked(new_data)
        if not tracked and not cites:
            self.state.links.pop(ch.path, None)
            return
        new = self.parse(ch.path, new_data)
        # the old version matters for a type or confidence change, and for the refs an
        # observation had before (only a newly added ref to a hypothesis confirms it)
        need_old = tracked or (new is not None and confirms(new) and any(
            t in self.state.hypotheses for t in local_targets(new.refs, self.repo_ids)))
        old = self.parse(ch.path, old_data) if need_old else None
        if old is not None and new is not None:
            for t in classify_modify(ch.path, old, new, info, self.claimant(old, ch.path)):
                self.emit(t, new)
        if new is not None and confirms(new) and cites:
            prev = local_targets(old.refs, self.repo_ids) if old is not None and confirms(old) else []
            self.confirmations(new, info, prev)
        self.track(ch.path, new)
        self.link(ch.path, new)

    def delete(self, path: str, blob: str, info: CommitInfo) -> None:
        old = self.parse(path, self.blob(blob))
        if old is None:
            self.untrack_hypothesis(path)
            return
        confirmers = self.state.confirmers.get(path) or []
        t = classify_delete(path, old, info, self.claimant(old, path),
                            confirmers[0] if confirmers else None)
        self.emit(t, old)
        self.state.links.pop(path, None)
        if old.type == FactType.OBSERVATION:
            self.drop_confirmer(path)
        self.track(path, None)

    def move(self, old_path: str, new_path: str, old_blob: str, new_blob: str,
             info: CommitInfo) -> None:
        new_data = self.blob(new_blob)
        new = self.parse(new_path, new_data)
        old = new if old_blob == new_blob else self.parse(old_path, self.blob(old_blob))
        claimant = self.claimant(old or new, old_path)
        self.emit(classify_move(old_path, new_path, old or new, info, claimant), new)
        low = old_path.lower()
        if low in self.state.hypotheses:
            confirmers = self.state.confirmers.pop(old_path, None)
            creator = self.state.creators.pop(old_path, None)
            self.state.claims.pop(old_path, None)
            self.untrack_hypothesis(old_path)
            if confirmers:
                self.state.confirmers[new_path] = confirmers
            if creator:
                self.state.creators[new_path] = creator
        if low in self.state.methodologies:
            self._name(self.state.methodologies.pop(low), -1)
        self.state.links.pop(old_path, None)
        for lst in self.state.confirmers.values():
            if old_path in lst:
                lst[lst.index(old_path)] = new_path
        if old is not None and new is not None:
            for t in classify_modify(new_path, old, new, info, claimant):
                self.emit(t, new)
        self.track(new_path, new, self.state.creators.get(new_path))
        self.link(new_path, new)

    def close(self) -> None:
        self.reader.close()


class _BatchReader(gitrepo.BlobReader):
    """`git cat-file --batch` with pipelined requests: one round trip for many blobs."""

    CHUNK = 1000  # 41 bytes a request: a chunk fits the pipe, so writing never blocks

    def __enter__(self) -> _BatchReader:
        return self

    def read_many(self, blobs: list[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        todo = list(dict.fromkeys(b for b in blobs if b and b != gitrepo.ZERO))
        proc = self._proc
        assert proc.stdin and proc.stdout
        for i in range(0, len(todo), self.CHUNK):
            chunk = todo[i:i + self.CHUNK]
            proc.stdin.write(b"".join(b.encode("ascii") + b"\n" for b in chunk))
            proc.stdin.flush()
            for blob in chunk:
                header = proc.stdout.readline().split()
                if len(header) < 3 or header[1] == b"missing":
                    continue
                out[blob] = proc.stdout.read(int(header[2]))
                proc.stdout.read(1)
        return out


def _pair_moves(dels: dict[str, str], adds: dict[str, str]) -> list[tuple[str, str]]:
    """Renames within one commit: the same blob, else the same file name (a knomit id)
    deleted in one folder and added in another."""
    pairs: list[tuple[str, str]] = []
    if not dels or not adds:
        return pairs
    by_blob: dict[str, list[str]] = {}
    for path, blob in dels.items():
        by_blob.setdefault(blob, []).append(path)
    taken_d: set[str] = set()
    taken_a: set[str] = set()
    for path, blob in adds.items():
        cands = [d for d in by_blob.get(blob, ()) if d not in taken_d]
        if cands:
            same = [d for d in cands if d.rsplit("/", 1)[-1] == path.rsplit("/", 1)[-1]]
            d = (same or cands)[0]
            pairs.append((d, path))
            taken_d.add(d)
            taken_a.add(path)
    by_name: dict[str, list[str]] = {}
    for path in dels:
        if path not in taken_d:
            by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    for path in adds:
        if path in taken_a:
            continue
        cands = by_name.get(path.rsplit("/", 1)[-1]) or []
        if len(cands) == 1:
            pairs.append((cands.pop(), path))
    return pairs


def _advance(repo: Path, log: TransitionLog, tip: str, *, extending: bool = False
             ) -> TransitionLog:
    """Walk the first-parent commits after `log.head` up to `tip`. An action and the undo
    that reverts it are left out, both (`githistory.cancelled_commits`): the walk goes on
    as if neither had been made. When `extending` and a new undo or redo names an action
    walked before, the whole range is walked again (that action must be left out too)."""
    start = time.perf_counter()
    rev_range = tip if log.head is None else f"{log.head}..{tip}"
    commits = [c for c in reversed(gitrepo.log(repo, rev_range)) if c.first_parent]
    cancelled = githistory.cancelled_commits(
        [githistory.Step(c.sha, f"{c.subject}\n\n{c.body}", githistory.effect(c.changes))
         for c in commits])
    if extending and cancelled.orphans:
        return walk(repo, tip if log.base is None else f"{log.base}..{tip}")
    log = replace(log, state=copy.deepcopy(log.state))  # never change the caller's log
    walker = _Walker(repo, log)
    seq = log.seq
    try:
        for c in commits:
            seq += 1
            if c.sha not in cancelled.shas:
                walker.commit(c, seq)
    finally:
        walker.close()
    links = walker.state.links
    out = [_relink(t, links) for t in log.transitions + walker.out]
    return TransitionLog(out, log.base, tip,
                         seq, walker.state, log.commits + len(commits),
                         log.seconds + time.perf_counter() - start)


def _relink(t: Transition, links: dict[str, list[str]]) -> Transition:
    """Add the methodologies the transition fact cites now: reflection reinforces a
    methodology by appending it to the refs of the transition fact, in a later commit."""
    key = t.confirming if t.kind == CONFIRMED_BY else (t.new_path or t.path)
    later = links.get(key or "")
    if not later:
        return t
    merged = tuple(dict.fromkeys([*t.methodologies, *later]))
    return t if merged == t.methodologies else replace(t, methodologies=merged)


def _creators(repo: Path, rev: str) -> dict[str, str]:
    """path → e-mail of the commit that added it, for every fact path ever added up to rev."""
    return githistory.added_by(repo, rev, "kb")


def _state_at(repo: Path, rev: str) -> State:
    """The walker's state at `rev` (for `--since`), from the tree alone: one pass over its
    blobs finds the hypotheses and methodologies (by their `type:` line, then parsed), and
    the facts whose frontmatter names one of their files are parsed for confirmers / links."""
    state = State()
    rev = _resolve(repo, rev)
    files = [(path, blob) for path, blob in githistory.tree_blobs(repo, rev, "kb")
             if is_fact_path(path)]
    ids = gitrepo.repo_ids(repo)
    tokens: dict[str, set[bytes]] = {}  # path → file names its frontmatter mentions
    with _BatchReader(repo) as reader:
        for i in range(0, len(files), _BatchReader.CHUNK):
            chunk = files[i:i + _BatchReader.CHUNK]
            blobs = reader.read_many([b for _, b in chunk])
            for path, blob in chunk:
                data = blobs.get(blob, b"")
                typ = sniff_type(data)
                if typ is None or typ in _TRACKED:
                    fact = parse_fact(path, data).fact
                    if fact is not None and fact.type == FactType.HYPOTHESIS:
                        state.hypotheses[path.lower()] = path
                    elif fact is not None and fact.type == FactType.METHODOLOGY:
                        state.methodologies[path.lower()] = path
                end = data.find(b"\n---", 3)
                names = {m.group(0).rsplit(b"/", 1)[-1].lower()
                         for m in _MD_TOKEN.finditer(data, 0, end if end > 0 else len(data))}
                if names:
                    tokens[path] = names
        tracked = {p.rsplit("/", 1)[-1].lower().encode()
                   for p in [*state.hypotheses.values(), *state.methodologies.values()]}
        wanted = [(p, b) for p, b in files if tokens.get(p, set()) & tracked]
        for i in range(0, len(wanted), _BatchReader.CHUNK):
            chunk = wanted[i:i + _BatchReader.CHUNK]
            blobs = reader.read_many([b for _, b in chunk])
            for path, blob in chunk:
                fact = parse_fact(path, blobs.get(blob, b"")).fact
                if fact is None:
                    continue
                targets = local_targets(fact.refs, ids)
                found = [state.methodologies[t] for t in targets if t in state.methodologies]
                if found:
                    state.links[path] = found
                if confirms(fact):
                    for target in targets:
                        hyp = state.hypotheses.get(target)
                        if hyp is not None:
                            state.confirmers.setdefault(hyp, []).append(path)
    return state


def counts(items: Iterable[Transition]) -> dict[str, int]:
    """Transitions per kind (retractions per reason: `retracted/refuted`)."""
    out: dict[str, int] = {}
    for t in items:
        key = f"{t.kind}/{t.reason}" if t.reason else t.kind
        out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items()))


__all__ = ["CONFIRMED_BY", "MOVE", "RangeError", "TransitionLog", "counts", "extend",
           "sniff_type", "transitions", "walk"]
