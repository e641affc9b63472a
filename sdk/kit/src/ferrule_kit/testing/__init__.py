"""Test kits for plugin authors (needs ``pip install 'ferrule[testing]'``).

- `ferrule_kit.testing.conformance`: `LanguageModelConformance`, the language-model contract as
  a test suite any backend subclasses (see its docstring).
- `ferrule_kit.testing.loopback`: a scripted, validating loopback HTTP server for provider
  wire tests (see its docstring).
- `ferrule_kit.testing.providers`: `ProviderConformance`, what every API provider plugin
  does alike (faults, retries, typed errors, keys) as a test suite (see its docstring).
- `ferrule_kit.testing.wire_checks`: checks providers' fake servers share while validating
  a request (base64 fields, the turns array, named tool declarations).
- `ferrule_kit.testing.strategies`: Hypothesis strategies of streamed turns (texts, JSON
  arguments, tool calls) and `cut`, for providers' property tests.
- `ferrule_kit.testing.dialects`: this repository's providers defined on a loopback server
  by name, for content plugins' tests of their parts on every provider's wire.
- `ferrule_kit.testing.byte_level`: `byte_alphabet`, for tests that write a tiny byte-level
  BPE vocabulary (a GGUF's, a tokenizer.json's) of their own.
- `ferrule_kit.testing.embedding` and `ferrule_kit.testing.vectors`: `EmbedderConformance`
  and `VectorStoreConformance`, the embedder and vector-store contracts as test suites.
"""

from .conformance import (
    Capabilities,
    LanguageModelConformance,
    LanguageModelUnderTest,
    ScriptedTurn,
    check_stream,
    fold,
    tiny_png,
    tiny_wav,
)
from .embedding import EmbedderConformance, EmbedderUnderTest
from .vectors import VectorStoreConformance, VectorStoreUnderTest

__all__ = [
    "Capabilities",
    "EmbedderConformance",
    "EmbedderUnderTest",
    "LanguageModelConformance",
    "LanguageModelUnderTest",
    "ScriptedTurn",
    "VectorStoreConformance",
    "VectorStoreUnderTest",
    "check_stream",
    "fold",
    "tiny_png",
    "tiny_wav",
]
