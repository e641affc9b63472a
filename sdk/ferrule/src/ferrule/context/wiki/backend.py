"""Agno's ``agno.context.wiki.backend``: where a `WikiContextProvider` keeps its pages.

A `WikiBackend` owns a folder (``path``): `setup` makes it ready, `sync` brings it up to
date before a read or write, `commit_after_write` keeps what a write changed (a
`CommitSummary`, or None when nothing changed). `FileSystemBackend` is a plain folder.
`GitBackend` is a clone of a git repository's branch: set up by cloning (or checking an
existing clone's remote and branch: a mismatch is a `WikiBackendError` unless
``force_clone``), synced by ``pull --rebase``, and after a write every change is committed
(a one-line message a model writes from the diff, `summarize_diff`, else a dated one),
rebased on the remote and pushed. An https remote gets the ``github_token`` in its URL,
which git's output and every error scrub; a ``file://`` remote (a repository on this
machine) takes none. `NotionDatabaseBackend` and `NotionPageBackend` are refused: ferrule
does not speak Notion's API.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import tempfile
from abc import ABC, abstractmethod
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

from ..provider import Status

__all__ = [
    "COMMIT_INSTRUCTIONS",
    "NO_NOTION",
    "CommitSummary",
    "FileSystemBackend",
    "GitBackend",
    "NotionDatabaseBackend",
    "NotionPageBackend",
    "WikiBackend",
    "WikiBackendError",
]

COMMIT_INSTRUCTIONS = """\
Write the one-line commit message for this change to a wiki: what changed, in the
imperative ("Add the deploy runbook"), under 72 characters, no final period, no prefix
such as "feat:". Answer with the line alone: no quotes, no Markdown."""
NO_NOTION = (
    "Notion backends: ferrule does not speak Notion's API; keep the wiki in a folder "
    "(FileSystemBackend) or a git repository (GitBackend)"
)
_DIFF_CHARS = 8000


class WikiBackendError(RuntimeError):
    """A backend could not set up, sync or keep a change (the message says what to do)."""


@attrs.define
class CommitSummary:
    """What a write committed: its ``sha``, ``message`` and how many files changed."""

    sha: str
    message: str
    files_changed: int


class WikiBackend(ABC):
    """Where a wiki's pages live (see the module docstring)."""

    path: Path

    def __init__(self, *, path: Path | str) -> None:
        self.path = Path(path).expanduser().resolve()

    @abstractmethod
    async def setup(self) -> None:
        """Make ``path`` ready (may be called again)."""

    @abstractmethod
    async def sync(self) -> None:
        """Bring ``path`` up to date with the wiki's source."""

    @abstractmethod
    async def commit_after_write(self, *, model: Any = None) -> CommitSummary | None:
        """Keep what a write changed; None when nothing changed."""

    def status(self) -> Status:
        """Whether the folder is there (no network)."""
        return Status(self.path.is_dir(), str(self.path))

    async def astatus(self) -> Status:
        return await asyncio.to_thread(self.status)

    async def summarize_diff(self, *, diff: str, model: Any) -> str:
        """A one-line commit message for ``diff``, written by ``model`` (at most 72
        characters); a dated message without a model, or when it fails."""
        fallback = f"Update wiki ({datetime.now(timezone.utc).isoformat(timespec='seconds')})"
        if model is None or not diff.strip():
            return fallback
        from ...agent import Agent

        shown = diff
        if len(diff) > _DIFF_CHARS:
            half = _DIFF_CHARS // 2
            shown = f"{diff[:half]}\n... [diff cut] ...\n{diff[-half:]}"
        try:
            run = await Agent(model=model, instructions=COMMIT_INSTRUCTIONS).arun(shown)
        except Exception:
            return fallback
        lines = str(run.content or "").strip().splitlines()
        line = re.sub(r"^[-*+]\s+", "", lines[0].strip().strip("`'\"")) if lines else ""
        if not line:
            return fallback
        return line if len(line) <= 72 else line[:71].rstrip() + "…"


class FileSystemBackend(WikiBackend):
    """A wiki in a plain folder: nothing to sync or commit."""

    def __init__(self, path: Path | str) -> None:
        super().__init__(path=path)

    async def setup(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)

    async def sync(self) -> None:
        """Nothing: the folder is the wiki."""

    async def commit_after_write(self, *, model: Any = None) -> CommitSummary | None:
        return None


def _authenticated(repo_url: str, token: str) -> str:
    if repo_url.startswith("file://"):
        return repo_url
    scheme, sep, rest = repo_url.partition("://")
    if not sep or scheme.lower() != "https":
        raise InvalidInputError(
            "repo_url is an https:// URL (or file:// for a repository on this machine)",
            field="repo_url",
        )
    rest = rest.split("@", 1)[1] if "@" in rest.split("/", 1)[0] else rest
    return f"https://x-access-token:{token}@{rest}"


def _bare(url: str) -> str:
    out = url.strip()
    if "://" in out:
        scheme, rest = out.split("://", 1)
        host = rest.split("/", 1)[0]
        if "@" in host:
            rest = rest.split("@", 1)[1]
        out = f"{scheme}://{rest}"
    return out.removesuffix("/").removesuffix(".git")


class GitBackend(WikiBackend):
    """``GitBackend(repo_url="https://github.com/acme/wiki.git", github_token=...)`` (see
    the module docstring)."""

    repo_url: str
    branch: str
    github_token: str
    force_clone: bool
    author_name: str
    author_email: str

    def __init__(
        self,
        *,
        repo_url: str,
        branch: str = "main",
        github_token: str,
        local_path: Path | str | None = None,
        force_clone: bool = False,
        author_name: str = "Agno Wiki Bot",
        author_email: str = "wiki-bot@agno.local",
    ) -> None:
        if not repo_url:
            raise InvalidInputError("give the repository's URL", field="repo_url")
        if not github_token:
            raise InvalidInputError("give a token for the repository", field="github_token")
        self.repo_url = repo_url
        self.branch = branch
        self.github_token = github_token
        self.force_clone = force_clone
        self.author_name = author_name
        self.author_email = author_email
        self._remote = _authenticated(repo_url, github_token)
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", _bare(repo_url).rsplit("/", 1)[-1]) or "wiki"
        default = Path(tempfile.gettempdir()) / "ferrule-wiki" / name
        super().__init__(path=local_path if local_path is not None else default)

    def __repr__(self) -> str:
        return f"GitBackend(repo_url={self.repo_url!r}, branch={self.branch!r})"

    def _scrub(self, text: str) -> str:
        return text.replace(self._remote, self.repo_url).replace(self.github_token, "***")

    async def _git(
        self, *args: str, cwd: Path | None = None, check: bool = True
    ) -> tuple[int, str]:
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
        process = await asyncio.create_subprocess_exec(
            "git",
            *args,
            cwd=str(cwd or self.path),
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await process.communicate()
        code = process.returncode or 0
        if check and code != 0:
            raise WikiBackendError(
                f"git {args[0]} failed: {self._scrub(err.decode(errors='replace').strip())}"
            )
        return code, self._scrub(out.decode(errors="replace"))

    async def setup(self) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise WikiBackendError(f"GitBackend: {self.path} is not a folder")
        if (self.path / ".git").exists() and not await self._stale_clone():
            await self._identity()
            return
        if self.path.exists() and any(self.path.iterdir()):
            if not self.force_clone:
                raise WikiBackendError(
                    f"GitBackend: {self.path} holds files and is not a clone of "
                    f"{self.repo_url}; pass force_clone=True once they may go"
                )
            shutil.rmtree(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        await self._git(
            "clone", "--branch", self.branch, "--single-branch", self._remote, str(self.path),
            cwd=self.path.parent,
        )  # fmt: skip
        await self._identity()

    async def _stale_clone(self) -> bool:
        """Whether the clone there must go (another remote or branch, with force_clone)."""
        _, remote = await self._git("remote", "get-url", "origin", check=False)
        _, branch = await self._git("rev-parse", "--abbrev-ref", "HEAD", check=False)
        if _bare(remote) == _bare(self.repo_url) and branch.strip() == self.branch:
            await self._git("remote", "set-url", "origin", self._remote)
            return False
        if not self.force_clone:
            raise WikiBackendError(
                f"GitBackend: the clone at {self.path} is of {_bare(remote)!r} on "
                f"{branch.strip()!r}, not {self.repo_url!r} on {self.branch!r}; pass "
                "force_clone=True to clone again"
            )
        shutil.rmtree(self.path)
        return True

    async def _identity(self) -> None:
        await self._git("config", "user.name", self.author_name)
        await self._git("config", "user.email", self.author_email)

    async def sync(self) -> None:
        await self._git("pull", "--rebase", "origin", self.branch)

    async def commit_after_write(self, *, model: Any = None) -> CommitSummary | None:
        await self._git("add", "-A")
        unchanged, _ = await self._git("diff", "--cached", "--quiet", check=False)
        if unchanged == 0:
            await self._git("push", "origin", self.branch, check=False)  # left from before
            return None
        _, stat = await self._git("diff", "--cached", "--stat")
        _, diff = await self._git("diff", "--cached")
        message = await self.summarize_diff(diff=diff or stat, model=model)
        await self._git("commit", "-m", message)
        _, sha = await self._git("rev-parse", "HEAD")
        found = re.search(r"\b(\d+) files? changed", stat)
        files = int(found.group(1)) if found else sum("|" in line for line in stat.splitlines())
        code, _ = await self._git("pull", "--rebase", "origin", self.branch, check=False)
        if code != 0:
            await self._git("rebase", "--abort", check=False)
            raise WikiBackendError(
                "GitBackend: the change is committed here but could not be rebased on the "
                f"remote; run git pull --rebase in {self.path} and resolve the conflict"
            )
        await self._git("push", "origin", self.branch)
        return CommitSummary(sha=sha.strip(), message=message, files_changed=files)


class NotionDatabaseBackend(WikiBackend):
    """Refused (see the module docstring)."""

    database_id: str
    token: str

    def __init__(
        self, *, database_id: str, token: str | None = None, local_path: Path | str | None = None
    ) -> None:
        raise InvalidInputError(NO_NOTION, field="backend")

    @property
    def manifest_path(self) -> Path:
        raise InvalidInputError(NO_NOTION, field="backend")

    async def setup(self) -> None:
        raise InvalidInputError(NO_NOTION, field="backend")

    async def sync(self) -> None:
        raise InvalidInputError(NO_NOTION, field="backend")

    async def commit_after_write(self, *, model: Any = None) -> CommitSummary | None:
        raise InvalidInputError(NO_NOTION, field="backend")


class NotionPageBackend(NotionDatabaseBackend):
    """Refused (see the module docstring)."""

    def __init__(
        self, *, root_page_id: str, token: str | None = None, local_path: Path | str | None = None
    ) -> None:
        raise InvalidInputError(NO_NOTION, field="backend")
