"""A docstring's summary and parameter descriptions (Google, NumPy, reST or Epydoc style,
read by docstring_parser): what a function tool tells the model about itself and its
arguments."""

from __future__ import annotations

import inspect
import re

__all__ = ["parse_docstring"]


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """A docstring's description and its parameters' descriptions.

    Understands Google (``Args:`` then ``name (type): text``), NumPy (``Parameters`` over
    dashes, then ``name : type`` and indented text) and reST (``:param name: text``)
    styles; wrapped lines are joined with single spaces (paragraphs stay apart).
    """
    import docstring_parser  # on the first function tool, not at `import ferrule`

    parsed = docstring_parser.parse(inspect.cleandoc(doc)) if doc else None
    if parsed is None:
        return "", {}
    parts = [parsed.short_description or "", parsed.long_description or ""]
    separator = "\n\n" if parsed.blank_after_short_description else "\n"
    description = separator.join(p for p in parts if p).strip()
    description = re.sub(r"(?<!\n)\n(?!\n)", " ", description)  # unwrap paragraphs
    params = {p.arg_name: " ".join((p.description or "").split()) for p in parsed.params}
    return description, params
