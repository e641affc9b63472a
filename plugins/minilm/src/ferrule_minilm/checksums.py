"""The SHA-256 of each weights file, as sentence-transformers/all-MiniLM-L6-v2 publishes
it: the build checks the files it extracts against them (``hatch_build.py`` reads this
module), and a component defined with ``validate_checksum=True`` checks the files it is
about to load (Ailoy's ``validate_checksum``). Standard library only: the build runs it."""

from __future__ import annotations

import hashlib
from pathlib import Path

#: file -> SHA-256.
FILES = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def mismatched(folder: Path) -> list[str]:
    """The files of `FILES` in ``folder`` that are missing or whose SHA-256 differs."""
    return [
        name
        for name, digest in FILES.items()
        if not ((folder / name).is_file() and sha256(folder / name) == digest)
    ]
