"""The skeleton of a text: what is left of it once everything that would let the same words
slip past a phrase list is taken away. `PromptInjectionGuardrail` matches skeletons.

A writer can hide ``ignore previous instructions`` from a plain substring match in many
ways a model still reads through: case (``IgNoRe``), leetspeak (``1gn0re prev1ous``),
invisible characters (``ig\\u200bnore``), look-alike letters of other scripts (Cyrillic
``о`` for Latin ``o``, Greek ``ι`` for ``i``), accents (``ïgnörë``), full-width and other
compatibility forms, and spacing or punctuation (``i g n o r e``, ``ignore-previous``,
``i.g.n.o.r.e``). The skeleton undoes each of them, in this order:

1. `normalize.normalized`: format characters (Cf) dropped, tag characters read as ASCII,
   NFKC (full-width letters, ligatures, mathematical letters);
2. accents dropped (NFKD, then every combining mark);
3. look-alike letters read as the Latin letter they imitate (`_LOOK_ALIKES`), and the
   digits and signs leetspeak writes for letters read as those letters (`_LEET`), before
   and after case folding (Greek ``ς`` looks like ``c``, its folded ``σ`` like ``o``;
   Cyrillic capitals fold to the small letters listed);
4. letters a reader confuses merged into one (``l``, ``i``, ``1``, ``|`` and ``!`` all
   read ``i``): a phrase and a text are both read that way, so either spelling matches;
5. everything that is not a letter or a digit dropped: spacing and punctuation.

A phrase matches a text when the phrase's skeleton is inside the text's. Since spacing is
gone, a phrase can also match across the end of one word and the start of the next
(``contact a sifter`` holds ``act as if``): the price of catching ``a c t  a s  i f``.
"""

from __future__ import annotations

import unicodedata

from .normalize import normalized

#: Letters of other scripts (and Latin letters NFKC keeps) that look like a Latin letter,
#: after case folding: Cyrillic, Greek, Armenian, small capitals and a few Latin variants.
_LOOK_ALIKES = {
    # Cyrillic
    "а": "a", "в": "b", "г": "r", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h",
    "о": "o", "п": "n", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ь": "b",
    "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h",
    "ӏ": "i", "ү": "y", "ҫ": "c", "ɡ": "g",
    # Greek
    "α": "a", "β": "b", "γ": "y", "ε": "e", "η": "n", "ι": "i", "κ": "k", "μ": "u",
    "ν": "v", "ο": "o", "π": "n", "ρ": "p", "ς": "c", "σ": "o", "τ": "t", "υ": "u",
    "χ": "x", "ω": "w",
    # Armenian
    "օ": "o", "ս": "u", "ց": "g", "հ": "h", "ո": "n", "ռ": "n", "զ": "q",
    # Latin letters that do not decompose, and small capitals
    "ı": "i", "ȷ": "j", "ɑ": "a", "ɩ": "i", "ø": "o", "đ": "d", "ħ": "h", "ł": "l",
    "ᴀ": "a", "ʙ": "b", "ᴄ": "c", "ᴅ": "d", "ᴇ": "e", "ɢ": "g", "ʜ": "h", "ɪ": "i",
    "ᴊ": "j", "ᴋ": "k", "ʟ": "l", "ᴍ": "m", "ɴ": "n", "ᴏ": "o", "ᴘ": "p", "ʀ": "r",
    "ꜱ": "s", "ᴛ": "t", "ᴜ": "u", "ᴠ": "v", "ᴡ": "w", "ʏ": "y", "ᴢ": "z",
}  # fmt: skip

#: What leetspeak writes for a letter, read back as the letter.
_LEET = {
    "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "6": "g", "7": "t", "8": "b",
    "9": "g", "@": "a", "$": "s", "!": "i", "|": "i", "+": "t", "€": "e",
}  # fmt: skip

#: Letters merged because each is written for the other (``1`` is ``l`` as often as ``i``).
_MERGED = {"l": "i"}

_TABLE = str.maketrans(
    {
        **{key: _MERGED.get(value, value) for key, value in {**_LOOK_ALIKES, **_LEET}.items()},
        **_MERGED,
    }
)


def skeleton(text: str) -> str:
    """``text`` read as `PromptInjectionGuardrail` matches it (see the module's docstring)."""
    folded = unicodedata.normalize("NFKD", normalized(text).text)
    bare = "".join(c for c in folded if not unicodedata.combining(c))
    # before case folding (which reads Greek ς as σ) and after (capitals of other scripts)
    read = bare.translate(_TABLE).casefold().translate(_TABLE)
    return "".join(c for c in read if c.isalnum())
