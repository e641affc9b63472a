"""Reading what `Knowledge` inserts into documents (`Source`): text, Markdown, PDF, files,
folders and URLs.

A document's id says where it came from, so inserting it again finds what is stored of
it: a file's absolute path, a URL, or ``text:<name>`` for text given by name (text with
no name is known by its hash, so a changed text is another document). PDFs are read by
the document content type (ferrule-document, with pypdf) through the part registry:
ferrule names no content plugin.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import attrs
from ferrule_kernel import InvalidInputError

__all__ = ["Source", "read_path", "read_text", "read_url"]

Kind = Literal["text", "markdown"]

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx"})
#: The largest file or download read (a PDF provider's limit too).
MAX_BYTES = 32 * 1024 * 1024
_MAX_ID = 512


@attrs.frozen
class Source:
    """One document to insert: its id, its name, its text and the metadata its chunks get.
    ``kind`` says how to split it (Markdown at headings first)."""

    document_id: str
    name: str
    text: str
    metadata: dict[str, Any]
    kind: Kind = "text"


def _document_id(prefix: str, key: str) -> str:
    ident = f"{prefix}{key}"
    if len(ident) <= _MAX_ID:
        return ident
    return f"{prefix}sha256:{hashlib.sha256(key.encode('utf-8')).hexdigest()}"


def read_text(
    text: str, name: str | None, metadata: dict[str, Any], *, kind: Kind = "text"
) -> Source:
    if not isinstance(text, str):
        raise InvalidInputError(
            f"expected a string, got {type(text).__name__}", field="text_content"
        )
    if name is not None:
        return Source(_document_id("text:", name), name, text, metadata, kind)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return Source(f"text:sha256:{digest}", text[:40].strip() or digest, text, metadata, kind)


def _pdf_text(data: bytes, name: str, field: str) -> str:
    from ferrule_kit.parts import registry

    try:
        document_content = registry.export("DocumentContent")
    except KeyError:
        raise InvalidInputError(
            f"{name} is a PDF: reading PDFs needs the document content type "
            "(pip install ferrule-document)",
            field=field,
        ) from None
    try:
        part = document_content.from_bytes(data, filename=name, max_bytes=MAX_BYTES)
        text: str = part.text()
    except InvalidInputError as exc:
        raise InvalidInputError(f"{name}: {exc.message}", field=field) from None
    return text


def _decode(data: bytes) -> str | None:
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _read_file(path: Path, name: str, metadata: dict[str, Any], field: str) -> Source | None:
    """The file as a document; None for a file that is neither a PDF nor UTF-8 text."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise InvalidInputError(
                f"{path} is {size / 2**20:.1f} MiB; the limit is {MAX_BYTES // 2**20} MiB",
                field=field,
            )
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.strerror}", field=field) from None
    document_id = _document_id("file:", str(path))
    if data.startswith(b"%PDF-") or path.suffix.lower() == ".pdf":
        return Source(document_id, name, _pdf_text(data, name, field), metadata)
    text = _decode(data)
    if text is None:
        return None
    kind: Kind = "markdown" if path.suffix.lower() in MARKDOWN_SUFFIXES else "text"
    return Source(document_id, name, text, metadata, kind)


def _selected(relative: PurePosixPath, include: Sequence[str], exclude: Sequence[str]) -> bool:
    def hit(patterns: Sequence[str]) -> bool:
        return any(
            fnmatch.fnmatch(str(relative), p) or fnmatch.fnmatch(relative.name, p) for p in patterns
        )

    if any(part.startswith(".") for part in relative.parts):
        return False  # hidden files and folders (.git, .venv) are never knowledge
    return (not include or hit(include)) and not hit(exclude)


def read_path(
    path: str | os.PathLike[str],
    name: str | None,
    metadata: dict[str, Any],
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> tuple[list[Source], list[str]]:
    """The documents at ``path`` (a file, or a folder read recursively, its files chosen by
    the ``include`` / ``exclude`` globs, matched against each file's path relative to the
    folder and against its name), and the files skipped as neither PDF nor UTF-8 text."""
    root = Path(path).expanduser()
    if not root.exists():
        raise InvalidInputError(f"no such file or folder: {root}", field="path")
    root = root.resolve()
    if root.is_file():
        source = _read_file(root, name or root.name, metadata, "path")
        if source is None:
            raise InvalidInputError(f"{root} is neither a PDF nor UTF-8 text", field="path")
        return [source], []
    sources: list[Source] = []
    skipped: list[str] = []
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = PurePosixPath(file.relative_to(root).as_posix())
        if not _selected(relative, include, exclude):
            continue
        source = _read_file(file, str(relative), metadata, "path")
        if source is None:
            skipped.append(str(file))
        else:
            sources.append(source)
    return sources, skipped


async def read_url(url: str, name: str | None, metadata: dict[str, Any]) -> Source:
    """The document at an http(s) URL: a PDF, Markdown or text (HTML is read as its text
    as sent: ferrule has no HTML reader)."""
    from urllib.parse import urlsplit

    import aiohttp

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInputError(f"expected an http(s) URL, got {parts.scheme}:...", field="url")
    # A password in the URL stays out of document ids, metadata and errors.
    host = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
    shown = parts._replace(netloc=host).geturl()
    label = name or PurePosixPath(parts.path).name or host
    timeout = aiohttp.ClientTimeout(total=60)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(url) as response,
        ):
            if response.status != 200:
                raise InvalidInputError(f"GET {shown} answered {response.status}", field="url")
            data = await response.content.read(MAX_BYTES + 1)
            content_type = response.content_type
    except (aiohttp.ClientError, TimeoutError) as exc:
        reason = str(exc) or type(exc).__name__
        if parts.password:
            reason = reason.replace(parts.password, "***")
        raise InvalidInputError(f"cannot fetch {shown}: {reason}", field="url") from None
    if len(data) > MAX_BYTES:
        raise InvalidInputError(f"{shown} is over {MAX_BYTES // 2**20} MiB", field="url")
    document_id = _document_id("url:", shown)
    if content_type == "application/pdf" or data.startswith(b"%PDF-"):
        return Source(document_id, label, _pdf_text(data, label, "url"), metadata)
    text = _decode(data)
    if text is None:
        raise InvalidInputError(f"{shown} is neither a PDF nor UTF-8 text", field="url")
    markdown = content_type == "text/markdown" or parts.path.lower().endswith((".md", ".markdown"))
    return Source(document_id, label, text, metadata, "markdown" if markdown else "text")
