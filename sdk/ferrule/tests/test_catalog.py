"""The catalog of this repository's plugins, and the kernel hint the top layer hands in."""

from __future__ import annotations

import pytest
from ferrule import Runtime
from ferrule.catalog import install_hint


@pytest.mark.parametrize(
    ("kind", "name", "hint"),
    [
        (
            "operator",
            "split_text",
            "It is provided by ferrule-split-text: pip install ferrule-split-text.",
        ),
        ("component_type", "openai_language_model", "It is provided by ferrule-openai."),
        (
            "component_type",
            "local_language_model",
            "It is provided by ferrule-llamacpp (or ferrule-exllama with CUDA).",
        ),
        (
            "component_type",
            "faiss_vector_store",
            "It is Ailoy 0.1's, provided by ferrule-ailoy over ferrule-faiss: "
            "pip install ferrule-ailoy ferrule-faiss.",
        ),
        (
            "component_type",
            "claude",
            "It is Ailoy 0.1's, provided by ferrule-ailoy over ferrule-anthropic: "
            "pip install ferrule-ailoy ferrule-anthropic.",
        ),
        ("component_type", "faiss_store", "It is provided by ferrule-faiss."),
        ("part_type", "image_url", "It is provided by ferrule-image: pip install ferrule-image."),
        ("part_type", "input_audio", "It is provided by ferrule-audio: pip install ferrule-audio."),
        ("part_type", "file", "It is provided by ferrule-document: pip install ferrule-document."),
        ("operator", "no_such_operator", None),
        ("operator", "image_url", None),  # a part type, not an operator
        ("tool", "echo", None),  # a kind the catalog does not know
    ],
)
def test_install_hint_names_the_distribution(kind, name, hint):
    assert install_hint(kind, name) == hint


def test_the_runtime_hands_its_kernel_the_catalog():
    with Runtime() as rt:
        assert rt.kernel.install_hint is install_hint
