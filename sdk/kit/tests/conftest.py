import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# --import-mode=importlib does not put test folders on sys.path; the helper modules here need it.
sys.path.insert(0, str(Path(__file__).parent))

from ferrule_kit.content.parts import registry
from parts_for_tests import COLOR, STICKER, ColorPart, StickerPart


@pytest.fixture(scope="module")
def color() -> Iterator[type[ColorPart]]:
    """The test part type ``color`` (wire type ``color``), registered for one test module."""
    registry.register(COLOR)
    yield ColorPart
    registry.unregister("color")


@pytest.fixture(scope="module")
def sticker() -> Iterator[type[StickerPart]]:
    """The test part type ``sticker`` (no text form), registered for one test module."""
    registry.register(STICKER)
    yield StickerPart
    registry.unregister("sticker")
