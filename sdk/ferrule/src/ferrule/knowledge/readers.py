"""Reading what `Knowledge` inserts into documents (`Source`): text, Markdown, PDF, files,
folders and URLs, under `ReadLimits`.

A document's id says where it came from, so inserting it again finds what is stored of
it: a file's absolute path, a URL, or ``text:<name>`` for text given by name (text with
no name is known by its hash, so a changed text is another document). PDFs are read by
the document content type (ferrule-document, with pypdf) through the part registry:
ferrule names no content plugin.

Files are hostile input. Each one is read under `ReadLimits` (its size; a PDF's pages,
extracted text and time, on top of pypdf's own 75 MB limit on each decompressed stream,
which stops a decompression bomb), and a bad file in a folder (unreadable, over a
bound, or a link out of the folder) becomes a `ReadFailure` while the rest is read.
`read_path` blocks: `Knowledge` runs it in a worker thread, never on the event loop.
A URL is fetched only where `ferrule_kit.network.addresses` allows (the address policy of
`http_request`, ``FERRULE_HTTP_REQUEST_ALLOW``), every redirect hop checked.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import attrs
from ferrule_kernel import InvalidInputError

from .document import ReadFailure

__all__ = [
    "Fetched",
    "ReadLimits",
    "ReadWith",
    "Source",
    "fetch_url",
    "file_document_id",
    "read_path",
    "read_text",
    "read_url",
    "url_document_id",
]

Kind = Literal["text", "markdown"]
#: ``read_with(file, name, metadata)``: the file read by a reader of one's own (Agno's, in
#: `ferrule.knowledge.reader`), or None to read it as `read_path` does.
ReadWith = Callable[[Path, str, dict[str, Any]], "Source | None"]

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx"})
#: The largest file or download read by default (a PDF provider's limit too).
MAX_BYTES = 32 * 1024 * 1024
_MAX_ID = 512


def _at_least(low: float, *, whole: bool) -> Any:
    what = "an integer" if whole else "a number"

    def check(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        wrong_kind = isinstance(value, bool) or not isinstance(value, int | float)
        if wrong_kind or (whole and not isinstance(value, int)) or value < low:
            raise InvalidInputError(f"must be {what} of at least {low}", field=attribute.name)

    return check


@attrs.frozen
class ReadLimits:
    """Bounds on reading one file or download: ``max_file_bytes`` (32 MiB), and for a PDF
    ``max_pdf_pages`` (2,000), ``max_pdf_chars`` of extracted text (20 million) and
    ``max_pdf_seconds`` of extraction (60, checked after each page). pypdf refuses any
    stream that would inflate past 75 MB besides. A file over a bound fails alone:
    `ReadFailure` in a folder, `InvalidInputError` for a single file or URL."""

    max_file_bytes: int = attrs.field(default=MAX_BYTES, validator=_at_least(1, whole=True))
    max_pdf_pages: int = attrs.field(default=2000, validator=_at_least(1, whole=True))
    max_pdf_chars: int = attrs.field(default=20_000_000, validator=_at_least(1, whole=True))
    max_pdf_seconds: float = attrs.field(default=60.0, validator=_at_least(0, whole=False))


@attrs.frozen
class Source:
    """One document to insert: its id, its name, its text and the metadata its chunks get.
    ``kind`` says how to split it (Markdown at headings first). ``pieces``: its chunks
    already cut (by a reader of Agno's), each with metadata of its own, stored as they
    are, and ``reader`` names the reader that cut them; ``size`` in bytes and ``type``
    (a file's extension, ``"url"``, ``"Text"``) say what was read."""

    document_id: str
    name: str
    text: str
    metadata: dict[str, Any]
    kind: Kind = "text"
    pieces: tuple[tuple[str, dict[str, Any]], ...] | None = None
    size: int | None = None
    type: str | None = None
    reader: str | None = None


def file_document_id(path: Path) -> str:
    """The id of the document a file is (its absolute path)."""
    return _document_id("file:", str(path))


def url_document_id(shown: str) -> str:
    """The id of the document a URL is (the URL, never with a password)."""
    return _document_id("url:", shown)


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
    size = len(text.encode("utf-8", "surrogatepass"))
    if name is not None:
        return Source(
            _document_id("text:", name), name, text, metadata, kind, size=size, type="Text"
        )
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    label = text[:40].strip() or digest
    return Source(f"text:sha256:{digest}", label, text, metadata, kind, size=size, type="Text")


def _pdf_text(data: bytes, name: str, field: str, limits: ReadLimits) -> str:
    from ferrule_kit.content.parts import registry

    try:
        document_content = registry.export("DocumentContent")
    except KeyError:
        raise InvalidInputError(
            f"{name} is a PDF: reading PDFs needs the document content type "
            "(pip install ferrule-document)",
            field=field,
        ) from None
    try:
        part = document_content.from_bytes(data, filename=name, max_bytes=limits.max_file_bytes)
        text: str = part.text(
            max_pages=limits.max_pdf_pages,
            max_chars=limits.max_pdf_chars,
            max_seconds=limits.max_pdf_seconds,
        )
    except InvalidInputError as exc:
        reason = exc.details.get("reason", "unreadable")
        raise InvalidInputError(f"{name}: {exc.message}", field=field, reason=reason) from None
    return text


def _decode(data: bytes) -> str | None:
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _read_file(
    path: Path, name: str, metadata: dict[str, Any], field: str, limits: ReadLimits
) -> Source | None:
    """The file as a document; None for a file that is neither a PDF nor UTF-8 text.
    Raises `InvalidInputError` (``details["reason"]`` saying why) for a file it cannot
    read or one over ``limits``."""
    try:
        size = path.stat().st_size
        if size > limits.max_file_bytes:
            raise InvalidInputError(
                f"{path} is {size / 2**20:.1f} MiB; the limit is "
                f"{limits.max_file_bytes / 2**20:g} MiB",
                field=field,
                reason="file_size",
            )
        with path.open("rb") as file:  # the limit holds for a file growing meanwhile
            data = file.read(limits.max_file_bytes + 1)
    except OSError as exc:
        raise InvalidInputError(
            f"cannot read {path}: {exc.strerror}", field=field, reason="unreadable"
        ) from None
    if len(data) > limits.max_file_bytes:
        raise InvalidInputError(
            f"{path} grew over {limits.max_file_bytes / 2**20:g} MiB while read",
            field=field,
            reason="file_size",
        )
    document_id = file_document_id(path)
    suffix = path.suffix.lower()
    if data.startswith(b"%PDF-") or suffix == ".pdf":
        text = _pdf_text(data, name, field, limits)
        return Source(document_id, name, text, metadata, size=len(data), type=suffix or ".pdf")
    decoded = _decode(data)
    if decoded is None:
        return None
    kind: Kind = "markdown" if suffix in MARKDOWN_SUFFIXES else "text"
    return Source(document_id, name, decoded, metadata, kind, size=len(data), type=suffix)


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
    *,
    limits: ReadLimits = ReadLimits(),
    follow_symlinks: bool = False,
    read_with: ReadWith | None = None,
) -> tuple[list[Source], list[str], list[ReadFailure]]:
    """The documents at ``path`` (a file, or a folder read recursively, its files chosen by
    the ``include`` / ``exclude`` globs, matched against each file's path relative to the
    folder and against its name), the files skipped as neither PDF nor UTF-8 text, and
    the folder's files that failed (each alone; a single file's failure raises).
    ``read_with``: a reader of one's own for the files it reads (`ReadWith`).

    A folder keeps to itself: a link to a file outside it is a failure
    (``"outside_folder"``) unless ``follow_symlinks``. This blocks (file reads, PDF
    parsing): run it in a worker thread."""
    root = Path(path).expanduser()
    if not root.exists():
        raise InvalidInputError(f"no such file or folder: {root}", field="path")
    root = root.resolve()

    def read(file: Path, label: str) -> Source | None:
        found = None if read_with is None else read_with(file, label, metadata)
        return found or _read_file(file, label, metadata, "path", limits)

    if root.is_file():
        source = read(root, name or root.name)
        if source is None:
            raise InvalidInputError(f"{root} is neither a PDF nor UTF-8 text", field="path")
        return [source], [], []
    sources: list[Source] = []
    skipped: list[str] = []
    failed: list[ReadFailure] = []
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = PurePosixPath(file.relative_to(root).as_posix())
        if not _selected(relative, include, exclude):
            continue
        if not follow_symlinks and not file.resolve().is_relative_to(root):
            message = (
                f"{file} links outside the folder (to {file.resolve()}); "
                "follow_symlinks=True reads such links"
            )
            failed.append(ReadFailure(str(file), "outside_folder", message))
            continue
        try:
            source = read(file, str(relative))
        except InvalidInputError as exc:
            reason = str(exc.details.get("reason", "unreadable"))
            failed.append(ReadFailure(str(file), reason, exc.message))
            continue
        if source is None:
            skipped.append(str(file))
        else:
            sources.append(source)
    return sources, skipped, failed


@attrs.frozen
class Fetched:
    """What a URL answered: its bytes and content type, the URL as shown (no password),
    and the name a document of it gets."""

    data: bytes
    content_type: str
    shown: str
    label: str
    path: str


async def fetch_url(url: str, name: str | None, limits: ReadLimits = ReadLimits()) -> Fetched:
    """GET an http(s) URL, only where the address policy allows (`ferrule_kit.network.addresses`,
    every redirect hop checked), under ``limits``."""
    from urllib.parse import urlsplit

    import aiohttp
    from ferrule_kit.network.addresses import ALLOW_VARIABLE, AddressRefusedError, Policy
    from ferrule_kit.network.checked_connector import CheckedConnector

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInputError(f"expected an http(s) URL, got {parts.scheme}:...", field="url")
    # A password in the URL stays out of document ids, metadata and errors.
    host = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
    shown = parts._replace(netloc=host).geturl()
    label = name or PurePosixPath(parts.path).name or host
    timeout = aiohttp.ClientTimeout(total=60)
    policy = Policy.from_environment()
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout, connector=CheckedConnector(policy)) as session,
            session.get(url) as response,
        ):
            if response.status != 200:
                raise InvalidInputError(f"GET {shown} answered {response.status}", field="url")
            data = await response.content.read(limits.max_file_bytes + 1)
            content_type = response.content_type
    except AddressRefusedError as exc:
        raise InvalidInputError(
            f"cannot fetch {shown}: refused: {exc.message}. Knowledge reaches public "
            f"addresses only; the host may allow others in {ALLOW_VARIABLE}",
            field="url",
            reason="address_refused",
        ) from None
    except (aiohttp.ClientError, TimeoutError) as exc:
        reason = str(exc) or type(exc).__name__
        if parts.password:
            reason = reason.replace(parts.password, "***")
        raise InvalidInputError(f"cannot fetch {shown}: {reason}", field="url") from None
    if len(data) > limits.max_file_bytes:
        raise InvalidInputError(
            f"{shown} is over {limits.max_file_bytes / 2**20:g} MiB", field="url"
        )
    return Fetched(data, content_type, shown, label, parts.path)


async def read_url(
    url: str, name: str | None, metadata: dict[str, Any], limits: ReadLimits = ReadLimits()
) -> Source:
    """The document at an http(s) URL (`fetch_url`): a PDF, Markdown or text (HTML is read
    as its text as sent: ferrule has no HTML reader); a PDF is parsed in a worker thread."""
    import asyncio

    got = await fetch_url(url, name, limits)
    document_id = url_document_id(got.shown)
    size = len(got.data)
    if got.content_type == "application/pdf" or got.data.startswith(b"%PDF-"):
        pdf_text = await asyncio.to_thread(_pdf_text, got.data, got.label, "url", limits)
        return Source(document_id, got.label, pdf_text, metadata, size=size, type="url")
    text = _decode(got.data)
    if text is None:
        raise InvalidInputError(f"{got.shown} is neither a PDF nor UTF-8 text", field="url")
    markdown = got.content_type == "text/markdown" or got.path.lower().endswith(
        (".md", ".markdown")
    )
    kind: Kind = "markdown" if markdown else "text"
    return Source(document_id, got.label, text, metadata, kind, size=size, type="url")
