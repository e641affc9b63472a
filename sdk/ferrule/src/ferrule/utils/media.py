"""Agno's ``agno.utils.media``: downloading a URL to a file (`download_file`,
`download_image`, `download_audio`) and saving base64 data (`save_base64_data`), the
file's folder made when missing. A download streams to the file (8 KiB at a time) and
follows redirects; an HTTP error raises. These run the program's own requests: no model
chooses their URLs. `download_knowledge_filters_sample_data` is refused: it fetches Agno's
sample files from Agno's servers.
"""

from __future__ import annotations

import base64
import enum
import urllib.request
from pathlib import Path

from ferrule_kernel import InvalidInputError

__all__ = [
    "SampleDataFileExtension",
    "download_audio",
    "download_file",
    "download_image",
    "download_knowledge_filters_sample_data",
    "save_base64_data",
]

_TIMEOUT = 60.0
_CHUNK = 8192


class SampleDataFileExtension(str, enum.Enum):
    DOCX = "docx"
    PDF = "pdf"
    TXT = "txt"
    JSON = "json"
    CSV = "csv"


def _fetch(url: str, output_path: str, *, image: bool = False) -> bool:
    request = urllib.request.Request(url, headers={"User-Agent": "ferrule"})
    with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:
        if image and not str(response.headers.get("Content-Type", "")).startswith("image"):
            return False
        path = Path(output_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as out:
            while chunk := response.read(_CHUNK):
                out.write(chunk)
    return True


def _checked(url: str) -> str:
    if not url.startswith(("http://", "https://")):
        raise InvalidInputError(f"expected an http(s) URL, got {url[:40]!r}", field="url")
    return url


def download_file(url: str, output_path: str) -> None:
    """Save what ``url`` answers to ``output_path``."""
    _fetch(_checked(url), output_path)


def download_image(url: str, output_path: str) -> bool:
    """Save the image at ``url`` to ``output_path``; False (nothing written) when what it
    answers is not an image."""
    return _fetch(_checked(url), output_path, image=True)


def download_audio(url: str, output_path: str) -> str:
    """Save the audio at ``url`` to ``output_path``; the path."""
    _fetch(_checked(url), output_path)
    return output_path


def save_base64_data(base64_data: str, output_path: str) -> bool:
    """Decode ``base64_data`` into ``output_path``; True when written."""
    try:
        data = base64.b64decode(base64_data, validate=False)
    except ValueError as exc:
        raise InvalidInputError(f"not base64: {exc}", field="base64_data") from None
    path = Path(output_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


NO_SAMPLES = (
    "download_knowledge_filters_sample_data fetches Agno's own sample files from Agno's "
    "servers; give Knowledge your own files (add_content(path=..., metadata=...))"
)


def download_knowledge_filters_sample_data(
    num_files: int = 5, file_extension: SampleDataFileExtension = SampleDataFileExtension.DOCX
) -> list[str]:
    """Refused (see the module docstring)."""
    raise InvalidInputError(NO_SAMPLES, field="download_knowledge_filters_sample_data")
