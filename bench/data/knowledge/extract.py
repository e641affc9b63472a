"""Rebuild jargon.txt from Debian's jargon-text package (the Jargon File 4.4.7, public
domain): ``apt-get download jargon-text``, unpack it with ``dpkg-deb -x``, then
``python extract.py usr/share/doc/jargon-text/jargon.txt.gz > jargon.txt``.

Kept: Part I (chapters 1 to 12), the lexicon entries under A to H, and appendices A to C.
Dropped: the tables of contents, each letter's list of headwords (hundreds of one-word
lines that no question is about), the rule lines and the three-space indent; no-break spaces
become spaces.
"""

from __future__ import annotations

import gzip
import re
import sys

LETTER = re.compile(r"  [A-Z]|  0")
KEPT_LETTERS = set("ABCDEFGH")


def extract(text: str) -> str:
    lines = text.replace("\u00a0", " ").split("\n")
    part_one = lines.index("Chapter 1. Hacker Slang and Hacker Culture")
    glossary = lines.index("Glossary", part_one)
    appendices = lines.index("Appendix A. Hacker Folklore")
    out = lines[part_one:glossary]
    # The lexicon proper: after the glossary's table of contents, each letter opens with
    # its list of headwords; its entries start at the first ":headword:" line.
    at = next(i for i in range(glossary, appendices) if lines[i] == "  0")
    while at < appendices:
        end = next((i for i in range(at + 1, appendices) if LETTER.fullmatch(lines[i])), appendices)
        letter = lines[at].strip()
        if letter in KEPT_LETTERS:
            first = next(i for i in range(at, end) if lines[i].startswith("   :"))
            out += [lines[at], "", *lines[first:end]]
        at = end
    out += lines[appendices:]
    kept = [re.sub(r"^ {1,3}", "", line) for line in out if not re.fullmatch(r"\s*[═━─]+\s*", line)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip() + "\n"


if __name__ == "__main__":
    with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f:
        sys.stdout.write(extract(f.read()))
