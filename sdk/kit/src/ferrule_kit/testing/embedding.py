"""`EmbedderConformance`: the embedder contract of `ferrule_kit.embeddings.embedding` as a test suite
that every embedder plugin (ours or a third party's) runs against itself.

Subclass it and provide an ``embedder`` fixture yielding an `EmbedderUnderTest`: a runtime
(``ferrule.AsyncRuntime``) with the component defined, its name, and whether it is a real
model (``semantic=True``: texts about the same thing must land nearer each other than
unrelated ones) or a scripted stand-in (an API behind a loopback server answering with
vectors derived from each text)::

    class TestMyEmbedderConformance(EmbedderConformance):
        @pytest.fixture
        async def embedder(self):
            async with AsyncRuntime() as rt:
                await rt.define("my_embedder", "emb", {...})
                yield EmbedderUnderTest(rt, "emb", semantic=True)

Checked: ``info`` (model, dimension, batch limit) and that ``embed`` keeps to it; one
vector per text, in order, of finite numbers, unit length when ``normalized``; the same
text giving the same vector, alone or in a batch, and in a batch larger than the model's
``max_batch`` (split by the component); both input types; usage counted; bad input
refused naming the field; for real models, similar texts nearer than unrelated ones.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

import attrs
import pytest
from ferrule_kernel import InvalidInputError

if TYPE_CHECKING:
    from .loopback import LoopbackServer, Scripted

__all__ = ["EmbedderConformance", "EmbedderUnderTest", "LoopbackEmbedder", "cosine"]


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


@attrs.define
class EmbedderUnderTest:
    #: A ``ferrule.AsyncRuntime`` (or anything with its ``call_method``).
    runtime: Any
    component: str
    #: A real model: related texts must be nearer than unrelated ones.
    semantic: bool = False
    #: Tolerance when comparing a text's vector alone and inside a batch (padding in a
    #: batch changes float rounding on real models).
    tolerance: float = 1e-4

    async def embed(self, texts: list[str], input_type: str = "document") -> dict[str, Any]:
        return await self.runtime.call_method(
            self.component, "embed", {"texts": texts, "input_type": input_type}
        )

    async def info(self) -> dict[str, Any]:
        return await self.runtime.call_method(self.component, "info", {})


TEXTS = [
    "The cat sat on the warm windowsill and watched the birds.",
    "Interest rates rose again as the central bank fought inflation.",
    "A kitten dozed in the sunshine by the window.",
    "Monetary policy tightened to bring prices under control.",
    "Photosynthesis turns light, water and carbon dioxide into sugar.",
]


@attrs.frozen
class LoopbackEmbedder:
    """An API embedder's tests on a loopback server: ``async with define(server,
    **attributes) as rt`` opens a runtime (``runtime()``, e.g. ``ferrule.AsyncRuntime``)
    with ``name`` defined as ``component_type``, its API at ``server``'s URL and ``path``,
    with ``attributes`` over ``defaults`` (the key, the model)."""

    runtime: Callable[[], AbstractAsyncContextManager[Any]]
    component_type: str
    path: str
    defaults: Mapping[str, Any] = attrs.field(factory=dict)
    name: str = "emb"

    @asynccontextmanager
    async def __call__(self, server: LoopbackServer, **attributes: Any) -> AsyncIterator[Any]:
        base_url = server.url + self.path
        async with self.runtime() as rt:
            settings = {**self.defaults, "base_url": base_url, **attributes}
            await rt.define(self.component_type, self.name, settings)
            yield rt

    @asynccontextmanager
    async def under_test(
        self, server: LoopbackServer, answer: Callable[[], Scripted], **attributes: Any
    ) -> AsyncIterator[EmbedderUnderTest]:
        """The embedder for `EmbedderConformance`: ``answer()`` scripted for every request
        the suite makes, its vectors compared exactly (to 1e-9)."""
        server.script(*[answer() for _ in range(64)])
        async with self(server, **attributes) as rt:
            yield EmbedderUnderTest(rt, self.name, tolerance=1e-9)


class EmbedderConformance:
    """The conformance suite; see the module docstring. Override the ``embedder`` fixture."""

    @pytest.fixture
    def embedder(self) -> EmbedderUnderTest:
        pytest.fail("an EmbedderConformance subclass must override the 'embedder' fixture")

    async def test_embedder_info(self, embedder: EmbedderUnderTest) -> None:
        info = await embedder.info()
        assert isinstance(info["model"], str) and info["model"]
        assert isinstance(info["dimension"], int) and info["dimension"] > 0
        assert isinstance(info["max_batch"], int) and info["max_batch"] > 0
        assert info["distance"] in ("cosine", "dot", "l2")
        assert isinstance(info["normalized"], bool)

    async def test_embedder_shapes(self, embedder: EmbedderUnderTest) -> None:
        info = await embedder.info()
        out = await embedder.embed(TEXTS)
        assert out["dimension"] == info["dimension"]
        assert out["model"] == info["model"]
        assert len(out["vectors"]) == len(TEXTS), "one vector per text"
        for vector in out["vectors"]:
            assert len(vector) == info["dimension"]
            assert all(isinstance(x, float) and math.isfinite(x) for x in vector)
            if info["normalized"]:
                assert abs(math.sqrt(sum(x * x for x in vector)) - 1.0) < 1e-3
        assert isinstance(out["usage"]["input_tokens"], int) and out["usage"]["input_tokens"] >= 0

    async def test_embedder_order_and_determinism(self, embedder: EmbedderUnderTest) -> None:
        batch = (await embedder.embed(TEXTS))["vectors"]
        for index in (0, 3):
            alone = (await embedder.embed([TEXTS[index]]))["vectors"][0]
            assert cosine(alone, batch[index]) > 1 - embedder.tolerance, (
                f"text {index} embeds the same alone and in a batch, at its own position"
            )
        assert cosine(batch[0], batch[1]) < 1 - embedder.tolerance, "different texts differ"

    async def test_embedder_splits_large_batches(self, embedder: EmbedderUnderTest) -> None:
        info = await embedder.info()
        count = min(info["max_batch"], 300) + 3
        texts = [f"Passage number {i}: {TEXTS[i % len(TEXTS)]}" for i in range(count)]
        vectors = (await embedder.embed(texts))["vectors"]
        assert len(vectors) == count
        last = (await embedder.embed([texts[-1]]))["vectors"][0]
        assert cosine(last, vectors[-1]) > 1 - embedder.tolerance, "the last text kept its place"

    async def test_embedder_query_input_type(self, embedder: EmbedderUnderTest) -> None:
        info = await embedder.info()
        out = await embedder.embed(["cats sleeping in the sun"], "query")
        assert len(out["vectors"]) == 1 and len(out["vectors"][0]) == info["dimension"]

    async def test_embedder_semantics(self, embedder: EmbedderUnderTest) -> None:
        if not embedder.semantic:
            pytest.skip("a scripted embedder has no semantics")
        v = (await embedder.embed(TEXTS))["vectors"]
        query = (await embedder.embed(["a cat resting by a sunny window"], "query"))["vectors"][0]
        assert cosine(v[0], v[2]) > cosine(v[0], v[1]) + 0.1, "cat texts nearer each other"
        assert cosine(v[1], v[3]) > cosine(v[1], v[4]) + 0.1, "money texts nearer each other"
        ranked = sorted(range(len(v)), key=lambda i: -cosine(query, v[i]))
        assert set(ranked[:2]) == {0, 2}, f"the query finds the cat texts first, got {ranked}"

    @pytest.mark.parametrize(
        ("inputs", "field"),
        [
            ({"texts": []}, "$.texts"),
            ({"texts": ["fine", "  "]}, "$.texts[1]"),
            ({"texts": ["fine", 3]}, "$.texts[1]"),
            ({"texts": "not a list"}, "$.texts"),
            ({"texts": ["x"], "input_type": "search"}, "$.input_type"),
            ({"text": ["x"]}, "$"),
        ],
    )
    async def test_embedder_bad_input_names_the_field(
        self, embedder: EmbedderUnderTest, inputs: dict[str, Any], field: str
    ) -> None:
        with pytest.raises(InvalidInputError) as info:
            await embedder.runtime.call_method(embedder.component, "embed", inputs)
        paths = [e["path"] for e in info.value.errors]
        assert any(p == field or p.startswith(field) for p in paths), f"{field} not in {paths}"
