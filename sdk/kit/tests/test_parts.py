"""The open part-type registry (`ferrule_kit.content.parts`): filled from the ``ferrule_register_part_types``
hook of entry-point plugins, or in-process; structuring and unstructuring on the wire;
providers' policies checked before the content plugin's encoder runs."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from ferrule_kernel import InvalidInputError, PluginLoadError
from ferrule_kit.content.messages import Message, Part, TextPart, message_text
from ferrule_kit.content.parts import (
    ANTHROPIC,
    GEMINI,
    OPENAI,
    TEXT,
    PartRegistry,
    PartType,
    class_name,
    media_bytes,
    registry,
)
from ferrule_kit.content.policy import Accepts, ContentPolicy
from ferrule_kit.errors import UnsupportedContentError
from ferrule_kit.testing.strategies import cut
from hypothesis import given
from hypothesis import strategies as st
from parts_for_tests import COLOR, ColorPart, StickerPart

# -- filled from entry points -------------------------------------------------------------

GROUP = "ferrule_parts_test"


def write_distribution(site: Path, name: str, module: str, source: str) -> None:
    """A distribution with an entry point of GROUP, installed into ``site``."""
    dist_info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(f"[{GROUP}]\n{module} = {module}\n")
    (site / f"{module}.py").write_text(textwrap.dedent(source))


PLUGIN = """
    from ferrule_kernel import hookimpl
    from ferrule_kit.content.parts import OPENAI, PartType

    @hookimpl
    def ferrule_register_part_types():
        return [
            PartType(
                name="{name}",
                cls="{module}_impl:Part",
                wire_types=("{name}_ref",),
                structure="{module}_impl:structure",
                unstructure="{module}_impl:unstructure",
                encoders={{OPENAI: "{module}_impl:encode"}},
            )
        ]
"""

IMPLEMENTATION = """
    import attrs

    @attrs.frozen
    class Part:
        ref: str
        type: str = "{name}"

    def structure(data):
        return Part(data["ref"])

    def unstructure(part):
        return {{"type": "{name}_ref", "ref": part.ref}}

    def encode(part, encoding):
        return {{"type": "text", "text": "{name} " + part.ref}}
"""


@pytest.fixture
def site(tmp_path, monkeypatch) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("FERRULE_DISCOVERY_CACHE", "0")
    return site


def install(site: Path, name: str, module: str, distribution: str = "") -> None:
    source = PLUGIN.format(name=name, module=module)
    write_distribution(site, distribution or f"ferrule-{name}", module, source)
    (site / f"{module}_impl.py").write_text(
        textwrap.dedent(IMPLEMENTATION.format(name=name, module=module))
    )


def test_hook_register_part_types(site):
    install(site, "map", "ferrule_test_map")
    install(site, "chart", "ferrule_test_chart")
    # a second plugin registering the part type "map" again is reported, the first kept
    install(site, "map", "ferrule_test_map_again", "ferrule-map-again")
    write_distribution(
        site,
        "ferrule-broken-parts",
        "ferrule_test_broken",
        """
        from ferrule_kernel import hookimpl

        @hookimpl
        def ferrule_register_part_types():
            return ["not a PartType"]
        """,
    )
    parts = PartRegistry(group=GROUP)
    assert set(parts.part_types()) == {"map", "chart"}  # not first-result: every plugin's kept
    assert parts.source("chart") == "ferrule-chart"
    assert set(parts.wire_types()) == {"text", "map_ref", "chart_ref"}
    # one "map" is kept, the other reported as a problem of its distribution
    second = ({"ferrule-map", "ferrule-map-again"} - {parts.source("map")}).pop()
    assert "part type 'map' is already registered by" in parts.problems[second]
    assert "expected PartType" in parts.problems["ferrule-broken-parts"]
    part = parts.structure({"type": "chart_ref", "ref": "c1"})
    assert parts.unstructure(part) == {"type": "chart_ref", "ref": "c1"}
    policy = ContentPolicy("openai", OPENAI)
    assert parts.encode(part, policy, "$.x") == {"type": "text", "text": "chart c1"}


def test_a_broken_target_is_a_plugin_load_error_naming_the_plugin(site):
    install(site, "map", "ferrule_test_map")
    (site / "ferrule_test_map_impl.py").write_text("raise ImportError('needs libmap')\n")
    parts = PartRegistry(group=GROUP)
    with pytest.raises(PluginLoadError, match=r"ferrule-map.*needs libmap") as info:
        parts.structure({"type": "map_ref", "ref": "m"})
    assert info.value.details["plugin"] == "ferrule-map"


def test_a_plugin_module_that_fails_to_import_is_a_problem_not_an_error(site):
    write_distribution(site, "ferrule-gone", "ferrule_test_gone", "raise ImportError('gone')\n")
    parts = PartRegistry(group=GROUP)
    assert parts.part_types() == {}
    assert "gone" in parts.problems["ferrule-gone"]


def test_reload_reads_the_entry_points_again_and_keeps_in_process_types(site):
    parts = PartRegistry(group=GROUP)
    parts.register(COLOR)
    assert set(parts.part_types()) == {"color"}
    install(site, "map", "ferrule_test_map")  # installed while running
    parts.reload()
    assert set(parts.part_types()) == {"color", "map"}
    assert parts.source("color") == "in-process"


def test_text_only_work_reads_no_plugin():
    code = (
        "import sys\n"
        "from ferrule_kit.content.messages import Message\n"
        "m = Message.from_dict({'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}]})\n"
        "m.to_dict(); Message('user', ['a', 'b'])\n"
        "from ferrule_kit.content.parts import registry\n"
        "print(registry._loaded, [n for n in sys.modules if n.endswith('.plugin')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "[]"]


# -- in-process registration --------------------------------------------------------------


def test_register_refuses_a_name_or_wire_type_already_taken(color):
    with pytest.raises(ValueError, match="already registered"):
        registry.register(COLOR)
    other = PartType("paint", ColorPart, ("color",), structure=dict, unstructure=dict)
    with pytest.raises(ValueError, match="wire type 'color' is already read by part type 'color'"):
        registry.register(other)


@pytest.mark.parametrize(
    ("name", "wire_types"), [("text", ("x",)), ("", ("x",)), ("x", ()), ("x", ("text",))]
)
def test_text_is_built_in(name, wire_types):
    with pytest.raises(ValueError):
        PartType(name, ColorPart, wire_types, structure=dict, unstructure=dict)


def test_the_part_namespace_and_exports_follow_the_registry(color):
    assert Part.Color is ColorPart and Part.Text is TextPart
    assert registry.export("ColorPart") is ColorPart
    assert "ColorPart" in registry.exported()
    with pytest.raises(
        AttributeError, match="no installed content plugin registers a part type 'hologram'"
    ):
        Part.Hologram  # noqa: B018


def test_a_value_that_is_not_a_registered_part_is_refused_naming_it(color):
    class Unknown:
        type = "hologram"

    with pytest.raises(InvalidInputError, match=r"part type 'hologram'.*register") as info:
        Message("user", ["look", Unknown()])
    assert info.value.errors[0]["path"] == "contents[1]"
    with pytest.raises(InvalidInputError, match="got int, which is not a content part"):
        Message("user", [3])
    policy = ContentPolicy("openai", OPENAI)
    with pytest.raises(UnsupportedContentError) as refused:
        registry.encode(Unknown(), policy, "$.messages[0].content[1]")
    assert refused.value.details == {
        **refused.value.details,
        "provider": "openai",
        "content_type": "hologram",
    }


# -- the wire -----------------------------------------------------------------------------


TEXT_A = {"type": "text", "text": "a"}


def test_an_unknown_wire_type_names_the_field_what_is_installed_and_what_to_install(color):
    hints = {("part_type", "video_url"): "It is provided by ferrule-video: pip install it."}
    before = registry.install_hint
    registry.install_hint = lambda kind, name: hints.get((kind, name))
    try:
        with pytest.raises(InvalidInputError) as info:
            Message.from_dict({"role": "user", "content": [TEXT_A, {"type": "video_url"}]})
        with pytest.raises(InvalidInputError) as unhinted:
            Message.from_dict({"role": "user", "content": [{"type": "hologram"}]})
    finally:
        registry.install_hint = before
    (error,) = info.value.errors
    assert error["path"] == "$.content[1].type"
    assert error["message"].startswith(
        "unknown part type 'video_url'. It is provided by ferrule-video: pip install it. "
        "Installed part types: 'text', "
    )
    assert "'color'" in error["message"]
    assert unhinted.value.errors[0]["message"].startswith("unknown part type 'hologram'. Installed")


# -- providers ----------------------------------------------------------------------------

FIELD = "$.messages[0].content[1]"


def refusal(part, policy) -> UnsupportedContentError:
    with pytest.raises(UnsupportedContentError) as info:
        registry.encode(part, policy, FIELD)
    assert info.value.errors[0]["path"] == FIELD
    assert info.value.details["provider"] == policy.provider
    return info.value


def test_the_encoder_of_the_providers_dialect_encodes(color):
    part = ColorPart("#ff8800")
    text = {"type": "text", "text": "[colour #ff8800]"}
    assert registry.encode(part, ContentPolicy("openai", OPENAI), FIELD) == text
    assert registry.encode(part, ContentPolicy("anthropic", ANTHROPIC), FIELD) == text
    assert registry.encode(part, ContentPolicy("qwen3", TEXT), FIELD) == "[colour #ff8800]"


def test_a_dialect_without_an_encoder_is_refused_with_where_it_would_work(color):
    policy = ContentPolicy(
        "gemini", GEMINI, label="Gemini", elsewhere={"color": "Send it to OpenAI instead"}
    )
    error = refusal(ColorPart("#ff8800"), policy)
    assert error.details["content_type"] == "color"
    assert error.message.startswith("Gemini does not accept color input; it accepts text")
    assert error.message.endswith(". Send it to OpenAI instead")


def test_a_policy_may_refuse_a_part_type_that_has_an_encoder(color):
    error = refusal(
        ColorPart("#ff8800"), ContentPolicy("xai", OPENAI, refuses=frozenset({"color"}))
    )
    assert "xai does not accept color input" in error.message
    assert "color" not in error.message.split("it accepts")[1]


class Media:
    """A part carrying media facts, checked by a policy's limits."""

    def __init__(self, url=None, media_format=None, size=0):
        self.url, self.media_format, self.size = url, media_format, size

    type = "media"


@pytest.fixture(scope="module")
def media():
    registry.register(
        PartType(
            "media",
            Media,
            ("media",),
            structure=dict,
            unstructure=dict,
            encoders={OPENAI: lambda part, encoding: {"type": "media"}},
        )
    )
    yield
    registry.unregister("media")


@pytest.mark.parametrize(
    ("part", "limits", "content_type", "words"),
    [
        (Media(url="https://e.org/a"), Accepts(urls=False), "media_url", ["by URL", "base64"]),
        (Media(media_format="x/y"), Accepts(inline=False), "media", ["by URL only"]),
        (
            Media(media_format="x/bmp"),
            Accepts(formats=frozenset({"x/png", "x/gif"})),
            "media",
            ["format x/bmp", "(use x/gif, x/png)"],
        ),
        (Media(), Accepts(formats=frozenset({"x/png"})), "media", ["format unknown"]),
        (
            Media(media_format="x/png", size=5 * 2**20 + 1),
            Accepts(max_bytes=5 * 2**20),
            "media",
            ["up to 5 MiB", "this one is 5.0 MiB"],
        ),
    ],
)
def test_limits_are_checked_before_the_encoder(media, part, limits, content_type, words):
    policy = ContentPolicy("acme", OPENAI, limits={"media": limits})
    error = refusal(part, policy)
    assert error.details["content_type"] == content_type
    for word in words:
        assert word in error.message


def test_within_the_limits_the_encoder_runs(media):
    policy = ContentPolicy(
        "acme",
        OPENAI,
        limits={"media": Accepts(formats=frozenset({"x/png"}), max_bytes=10, urls=False)},
        size_unit="MB",
    )
    assert registry.encode(Media(media_format="x/png", size=10), policy, FIELD) == {"type": "media"}
    assert "up to 0 MB" in refusal(Media(media_format="x/png", size=11), policy).message
    assert "media (base64 only; x/png)" in registry.accepted(policy)


def test_message_text_gives_text_only_models_the_text_forms(color, sticker):
    policy = ContentPolicy("llama", TEXT)
    message = Message("user", ["Name ", "this:", ColorPart("#000000"), "please"])
    assert message_text(message, "$.messages[0]", policy) == (
        "Name this:\n\n[colour #000000]\n\nplease"
    )
    with pytest.raises(UnsupportedContentError) as info:
        message_text(Message("user", ["a", StickerPart("s")]), "$.messages[2]", policy)
    assert info.value.errors[0]["path"] == "$.messages[2].content[1]"


# -- the layer above ----------------------------------------------------------------------


class _Private:
    """A class from a private module, as pathlib's are on Python 3.13."""


_Private.__module__ = "shapes._impl"
_Private.__qualname__ = "Shape"


class Circle(_Private):
    pass


def test_adapters_match_a_public_class_name_along_the_mro():
    assert class_name(_Private) == "shapes.Shape"
    parts = PartRegistry(load_entry_points=False)
    parts.register(
        PartType(
            "color",
            ColorPart,
            ("color",),
            structure=dict,
            unstructure=dict,
            adapters={"shapes.Shape": lambda shape: ColorPart("#00ff00")},
        )
    )
    assert parts.adapt(Circle()) == ColorPart("#00ff00")
    assert parts.adapt(3) is None


@pytest.mark.parametrize(
    ("data", "words"),
    [("not bytes", "expected bytes, got str"), (b"", "the image is empty"), (b"x" * 11, "MiB")],
)
def test_media_bytes_refuses_what_is_not_media_bytes_naming_data(data, words):
    with pytest.raises(InvalidInputError, match=words) as info:
        media_bytes(data, "the image", max_bytes=10)
    assert info.value.errors[0]["path"] == "data"


def test_media_bytes_takes_any_bytes_like_value():
    assert media_bytes(memoryview(b"abc"), "the audio", 3) == b"abc"
    assert media_bytes(bytearray(b"abc"), "the audio", 3) == b"abc"


@given(st.text(max_size=30), st.lists(st.integers()))
def test_cut_pieces_join_back_and_none_is_empty(data, points):
    pieces = cut(data, points)
    assert "".join(pieces) == data and all(pieces)
