"""ImageContent: real images made with Pillow, type sniffing, limits; the image part type in
the registry (wire shape, errors naming fields); and the parts reaching every provider's
wire through a Runtime (the providers are installed by the test extra, never imported)."""

from __future__ import annotations

import base64
import io
import subprocess
import sys

import pytest
from ferrule import AsyncRuntime
from ferrule_image import ImageContent, ImagePart, sniff_image_mime
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import Message, Part, TextPart
from ferrule_kit.content.parts import registry
from ferrule_kit.errors import UnsupportedContentError
from ferrule_kit.testing.dialects import PROVIDERS, send
from ferrule_kit.testing.loopback import LoopbackServer
from hypothesis import given
from hypothesis import strategies as st

PIL = pytest.importorskip("PIL.Image", reason="the Pillow tests need Pillow (the test extra)")


def pillow_bytes(fmt: str, mode: str = "RGB", size=(3, 2)) -> bytes:
    buffer = io.BytesIO()
    PIL.new(mode, size, "red").save(buffer, format=fmt)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("fmt", "mime"),
    [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("WEBP", "image/webp"), ("GIF", "image/gif")],
)
def test_from_bytes_sniffs_real_images(fmt, mime):
    data = pillow_bytes(fmt)
    part = ImageContent.from_bytes(data)
    assert isinstance(part, ImagePart)
    assert part.mime_type == mime and part.to_bytes() == data
    assert part.data_url == f"data:{mime};base64," + base64.b64encode(data).decode()
    assert ImageContent.from_bytes(data, mime_type=mime.upper()) == part


@pytest.mark.parametrize("fmt", ["BMP", "TIFF"])
def test_formats_no_provider_takes_are_refused_with_a_hint(fmt):
    with pytest.raises(InvalidInputError, match="convert to PNG or JPEG") as info:
        ImageContent.from_bytes(pillow_bytes(fmt))
    assert info.value.errors[0]["path"] == "data"


def test_mime_type_must_agree_with_the_bytes():
    with pytest.raises(InvalidInputError, match="image/jpeg but the bytes are image/png") as info:
        ImageContent.from_bytes(pillow_bytes("PNG"), mime_type="image/jpeg")
    assert info.value.errors[0]["path"] == "mime_type"


@pytest.mark.parametrize(
    ("data", "words"),
    [(b"", "empty"), (b"hello world", "unrecognised"), ("text", "expected bytes")],
)
def test_bad_bytes(data, words):
    with pytest.raises(InvalidInputError, match=words):
        ImageContent.from_bytes(data)


def test_size_limit():
    data = pillow_bytes("PNG")
    with pytest.raises(InvalidInputError, match="limit"):
        ImageContent.from_bytes(data, max_bytes=len(data) - 1)
    assert ImageContent.from_bytes(data, max_bytes=len(data)).mime_type == "image/png"


def test_from_path(tmp_path):
    path = tmp_path / "picture.dat"  # the name does not decide the type
    path.write_bytes(pillow_bytes("JPEG"))
    assert ImageContent.from_path(path).mime_type == "image/jpeg"
    with pytest.raises(InvalidInputError, match="cannot read") as info:
        ImageContent.from_path(tmp_path / "missing.png")
    assert info.value.errors[0]["path"] == "path"
    with pytest.raises(InvalidInputError, match="limit"):
        ImageContent.from_path(path, max_bytes=10)


def test_from_pillow_keeps_format_or_uses_png():
    opened = PIL.open(io.BytesIO(pillow_bytes("JPEG")))
    assert ImageContent.from_pillow(opened).mime_type == "image/jpeg"
    assert ImageContent.from_pillow(PIL.new("RGBA", (2, 2))).mime_type == "image/png"
    bmp = PIL.open(io.BytesIO(pillow_bytes("BMP")))
    assert ImageContent.from_pillow(bmp).mime_type == "image/png"  # providers take no BMP
    rgba_as_jpeg = ImageContent.from_pillow(PIL.new("RGBA", (2, 2)), format="JPEG")
    assert rgba_as_jpeg.mime_type == "image/jpeg"
    with pytest.raises(InvalidInputError) as info:
        ImageContent.from_pillow(PIL.new("RGB", (2, 2)), format="TIFF")
    assert info.value.errors[0]["path"] == "format"
    with pytest.raises(InvalidInputError, match="expected a Pillow image"):
        ImageContent.from_pillow(b"not an image")


@pytest.mark.parametrize("url", ["https://example.com/a.png", "http://host:8080/x?y=1"])
def test_from_url(url):
    part = ImageContent.from_url(url)
    assert part.url == url and part.data is None


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "example.com/a.png", "data:image/png;base64,AAAA", "https://"]
)
def test_from_url_refuses_non_public_urls(url):
    with pytest.raises(InvalidInputError) as info:
        ImageContent.from_url(url)
    assert info.value.errors[0]["path"] == "url"


@given(st.sampled_from(["PNG", "JPEG", "GIF"]), st.integers(1, 40), st.integers(1, 40))
def test_parts_round_trip_through_the_wire(fmt, width, height):
    part = ImageContent.from_bytes(pillow_bytes(fmt, size=(width, height)))
    message = Message(role="user", contents=[TextPart("look"), part])
    assert Message.from_dict(message.to_dict()) == message
    assert (
        sniff_image_mime(Message.from_dict(message.to_dict()).contents[1].to_bytes())
        == part.mime_type
    )


def test_importing_does_not_import_pillow():
    code = (
        "import sys, ferrule_image; from ferrule import ImageContent; print('PIL' in sys.modules)"
    )
    assert (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()
        == "False"
    )


# -- the part type -------------------------------------------------------------------------


def test_the_plugin_registers_the_image_part_type():
    assert registry.source("image") == "ferrule-image"
    assert Part.Image is ImagePart
    import ferrule

    assert ferrule.ImageContent is ImageContent and ferrule.ImagePart is ImagePart


@pytest.mark.parametrize(
    ("part", "path", "words"),
    [
        (
            {"type": "image_url", "image_url": {}},
            "$.content[0].image_url.url",
            "required field missing",
        ),
        (
            {"type": "image_url", "image_url": {"url": 3}},
            "$.content[0].image_url.url",
            "expected string",
        ),
        ({"type": "image_url"}, "$.content[0].image_url", "required field missing"),
        (
            {"type": "image_url", "image_url": {"url": "data:image/png,AAAA"}},
            "$.content[0].image_url.url",
            "data URLs must be base64",
        ),
        (
            {"type": "image_url", "image_url": {"url": "https://e.org/a.png"}, "text": "x"},
            "$.content[0].text",
            "unknown field",
        ),
    ],
)
def test_bad_wire_images_name_the_field(part, path, words):
    with pytest.raises(InvalidInputError) as info:
        Message.from_dict({"role": "user", "content": [part]})
    assert [(e["path"], words in e["message"]) for e in info.value.errors] == [(path, True)]


def test_openais_detail_is_accepted_on_the_wire():
    part = {"type": "image_url", "image_url": {"url": "https://e.org/a.png", "detail": "low"}}
    assert Message.from_dict({"role": "user", "content": [part]}).contents == [
        ImagePart(url="https://e.org/a.png")
    ]


def test_a_pillow_image_is_adapted_by_the_plugin():
    part = registry.adapt(PIL.new("RGB", (2, 2), "blue"))
    assert isinstance(part, ImagePart) and part.mime_type == "image/png"


# -- every provider's wire -----------------------------------------------------------------

#: How each provider's wire carries an image given as base64 data.
BASE64_SHAPES = {
    "openai": lambda url, b64: {"type": "image_url", "image_url": {"url": url}},
    "openai-compatible": lambda url, b64: {"type": "image_url", "image_url": {"url": url}},
    "xai": lambda url, b64: {"type": "image_url", "image_url": {"url": url}},
    "anthropic": lambda url, b64: {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": b64},
    },
    "gemini": lambda url, b64: {"inlineData": {"mimeType": "image/png", "data": b64}},
}
#: Providers that fetch public image URLs themselves, and how their wire names one.
TAKES_URLS = {
    "openai": lambda url: {"type": "image_url", "image_url": {"url": url}},
    "openai-compatible": lambda url: {"type": "image_url", "image_url": {"url": url}},
    "xai": lambda url: {"type": "image_url", "image_url": {"url": url}},
    "anthropic": lambda url: {"type": "image", "source": {"type": "url", "url": url}},
}


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
async def test_images_reach_every_provider(provider, monkeypatch):
    part = ImageContent.from_bytes(pillow_bytes("PNG"))
    url = "https://example.com/cat.jpg"
    async with LoopbackServer() as server, AsyncRuntime() as rt:
        sent = await send(
            rt, server, provider, [{"type": "text", "text": "What?"}, part_wire(part)], monkeypatch
        )
        assert sent[1] == BASE64_SHAPES[provider.name](part.data_url, part.data)
        if provider.name in TAKES_URLS:
            sent = await send(
                rt, server, provider, [part_wire(ImageContent.from_url(url))], monkeypatch
            )
            assert sent == [TAKES_URLS[provider.name](url)]
        else:
            with pytest.raises(UnsupportedContentError) as info:
                await send(
                    rt, server, provider, [part_wire(ImageContent.from_url(url))], monkeypatch
                )
            assert info.value.details["content_type"] == "image_url"
            assert "base64" in info.value.message
            assert info.value.errors[0]["path"] == "$.messages[0].content[0]"
        assert len(server.requests) == (2 if provider.name in TAKES_URLS else 1)


def part_wire(part: ImagePart) -> dict:
    return Message("user", [part]).to_dict()["content"][0]


async def test_image_types_and_sizes_are_each_providers(monkeypatch):
    by_name = {p.name: p for p in PROVIDERS}
    webp = part_wire(ImageContent.from_bytes(pillow_bytes("WEBP")))
    async with LoopbackServer() as server, AsyncRuntime() as rt:
        for name in ("xai", "anthropic"):  # xAI takes JPEG and PNG; Anthropic takes WEBP
            if name == "xai":
                with pytest.raises(UnsupportedContentError, match="image/webp"):
                    await send(rt, server, by_name[name], [webp], monkeypatch)
            else:
                sent = await send(rt, server, by_name[name], [webp], monkeypatch)
                assert sent[0]["source"]["media_type"] == "image/webp"
    assert len(server.requests) == 1
