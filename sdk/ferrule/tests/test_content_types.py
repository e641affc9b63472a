"""Content types seen from the top layer: what the catalog says to install matches what
this repository's content plugins register, and the hints reach the user (`from ferrule
import ...`, a wire part nothing installed reads, an object in a prompt). The plugins are
installed by the test extra; the sdk names none of them in its code."""

from __future__ import annotations

import re
from pathlib import Path

import ferrule
import pytest
from ferrule import Runtime
from ferrule.catalog import EXPORTS, OBJECTS, PART_TYPES
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.parts import registry
from ferrule_testmodel import TestModel

ROOT = Path(__file__).resolve().parents[3]


def repository_distributions() -> set[str]:
    return {
        re.search(r'^name = "([^"]+)"', path.read_text(), re.MULTILINE).group(1)  # type: ignore[union-attr]
        for path in ROOT.glob("plugins/*/pyproject.toml")
    }


def test_the_catalog_names_what_the_repositorys_content_plugins_register():
    ours = repository_distributions()
    registered: dict[str, dict[str, str]] = {"part_type": {}, "export": {}, "object": {}}
    for name, part_type in registry.part_types().items():
        source = registry.source(name)
        if source in ours:
            registered["part_type"].update(dict.fromkeys(part_type.wire_types, source))
            registered["export"].update(dict.fromkeys(part_type.exports, source))
            registered["object"].update(dict.fromkeys(part_type.adapters, source))
    assert set(registered["part_type"].values()) == {
        "ferrule-image",
        "ferrule-audio",
        "ferrule-document",
    }
    assert registered == {"part_type": PART_TYPES, "export": EXPORTS, "object": OBJECTS}


@pytest.fixture
def without(request):
    """The part registry as if the content plugin of a part type were not installed."""
    registry.unregister(request.param)
    yield
    registry.reload()


@pytest.mark.parametrize("without", ["document"], indirect=True)
def test_a_missing_content_plugin_is_named_everywhere(without):
    with pytest.raises(ImportError, match="pip install ferrule-document"):
        ferrule.DocumentContent  # noqa: B018
    assert "DocumentContent" not in dir(ferrule) and "ImageContent" in dir(ferrule)
    with Runtime() as rt:  # the runtime hands the part registry the catalog's hints
        route = TestModel().route(rt.kernel)
        rt.define(route.component_type, "lm", route.attributes)
        part = {"type": "file", "file": {"file_data": "data:text/plain;base64,aGk="}}
        with pytest.raises(InvalidInputError) as info:
            list(
                rt.call_iter_method(
                    "lm", "infer", {"messages": [{"role": "user", "content": [part]}]}
                )
            )
    (error,) = info.value.errors
    assert error["path"] == "$.messages[0].content[0].type"
    assert (
        "unknown part type 'file'. It is provided by ferrule-document: pip install"
        in error["message"]
    )
    assert "'image_url'" in error["message"]  # what is installed


@pytest.mark.parametrize("without", ["document"], indirect=True)
def test_files_need_ferrule_document(without, tmp_path):
    from ferrule.agent import prompt_parts

    with pytest.raises(ImportError, match=r"files\[0\].*pip install ferrule-document"):
        prompt_parts("Summarise.", [tmp_path / "report.pdf"])
