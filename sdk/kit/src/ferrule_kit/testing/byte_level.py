"""What tests need to write a byte-level BPE vocabulary (GPT-2's, Qwen's, Llama 3's) for a
tiny model of their own: `byte_alphabet`, the printable character each byte stands as."""

from __future__ import annotations

__all__ = ["byte_alphabet"]

#: The bytes that stand as themselves: visible ASCII and Latin-1, less the soft hyphen.
_PRINTABLE = frozenset(
    [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
)


def byte_alphabet() -> list[str]:
    """GPT-2's printable stand-in for each byte value, in byte order (what byte-level BPE
    vocabularies store): a printable byte is its own character; the others, in order, are
    the characters from U+0100 on (so a space is "Ġ" and a newline "Ċ")."""
    chars, extra = {}, 0
    for byte in range(256):
        if byte in _PRINTABLE:
            chars[byte] = chr(byte)
        else:
            chars[byte] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]
