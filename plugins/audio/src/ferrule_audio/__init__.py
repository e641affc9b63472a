"""ferrule-audio: the audio part type, and `AudioContent`, which builds `AudioPart`s from
bytes or a file, checking that the bytes are the format they claim and the size first.

    from ferrule import AudioContent          # or: from ferrule_audio import AudioContent
    AudioContent.from_bytes(data=open("a.wav", "rb").read(), format="wav")
    AudioContent.from_path("a.mp3")          # format from the file name

The plugin (`ferrule_audio.plugin`) registers the part type ``audio`` (wire type
``input_audio``) with its encoders for the OpenAI, OpenAI-compatible and Gemini dialects
(`ferrule_audio.encoders`). Which providers take audio, and in which formats, is each
provider's policy (OpenAI: wav and mp3; Gemini: more; Anthropic and xAI: none), checked
before any request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ferrule_kit.content.parts import lazy_attributes

if TYPE_CHECKING:
    from .content import FORMATS, MAX_AUDIO_BYTES, AudioContent, sniff_audio_format
    from .part import AudioPart

__all__ = ["FORMATS", "MAX_AUDIO_BYTES", "AudioContent", "AudioPart", "sniff_audio_format"]

# Discovery imports this package on every Runtime() (for ferrule_audio.plugin): the public
# names are imported when first used.
__getattr__ = lazy_attributes(
    __name__,
    {
        "AudioContent": ".content",
        "AudioPart": ".part",
        "FORMATS": ".content",
        "MAX_AUDIO_BYTES": ".content",
        "sniff_audio_format": ".content",
    },
)
