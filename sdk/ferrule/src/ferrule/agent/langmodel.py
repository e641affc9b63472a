"""Where an agent's model lives: `LangModel`, a model defined on a runtime (the process's
shared one when none is named), shared by any number of agents."""

from __future__ import annotations

import itertools
import uuid
import weakref
from typing import Any

from ferrule_kit.lmspec import ModelRoute

from ..models import APIModel, LocalModel
from ..runtime import _new_kernel
from ..shared_runtime import default_runtime

_names = itertools.count(1)


#: Each remote runtime's routing kernel, made once (discovery is not free, and every agent
#: made on the runtime asks it: for its model's route and its instrumentation).
_remote_kernels: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def routing_kernel(runtime: Any) -> Any:
    """The kernel whose plugins say which component type serves a model. A remote Runtime
    has none here: this process's plugins answer (they should match the server's)."""
    kernel = getattr(runtime, "kernel", None)
    if kernel is not None:
        return kernel
    try:
        return _remote_kernels[runtime]
    except KeyError:
        kernel = _remote_kernels[runtime] = _new_kernel()
        return kernel
    except TypeError:  # a runtime that cannot be weakly referenced: no cache
        return _new_kernel()


def component_name(prefix: str) -> str:
    return f"{prefix}-{next(_names)}-{uuid.uuid4().hex[:8]}"


class LangModel:
    """A language model defined on a runtime, which any number of agents may use.

    ``lm = await LangModel.new_local("Qwen/Qwen3-0.6B")``, then ``Agent(lm)``: as in the
    stateless multi-turn guide. The model stays defined until `adelete` (or its runtime
    stops); agents using it do not delete it.
    """

    def __init__(self, runtime: Any, name: str, route: ModelRoute, model: Any = None) -> None:
        self.runtime = runtime
        self.name = name
        self.route = route
        self.model = model

    def __repr__(self) -> str:
        return f"LangModel({self.model!r}, name={self.name!r})"

    @classmethod
    async def new(
        cls, model: Any, *, runtime: Any = None, placement: dict[str, Any] | None = None
    ) -> LangModel:
        """Define ``model`` (a `LocalModel`, `APIModel`, `TestModel`, ...) on ``runtime``
        (the default runtime if None); ``placement`` puts it where a placement plugin runs
        it (``{"kind": "ray", "replicas": 4, "num_gpus": 1}``: docs/deployment.md)."""
        runtime = runtime if runtime is not None else default_runtime()
        route = model.route(routing_kernel(runtime))
        name = component_name("lm")
        if placement is None:
            await runtime.adefine(route.component_type, name, route.attributes)
        else:
            await runtime.adefine(route.component_type, name, route.attributes, placement=placement)
        return cls(runtime, name, route, model)

    @classmethod
    async def new_local(
        cls, model_id: str | None = None, *, runtime: Any = None, **options: Any
    ) -> LangModel:
        model = (
            LocalModel(model_id, options) if model_id is not None else LocalModel(options=options)
        )
        return await cls.new(model, runtime=runtime)

    @classmethod
    async def new_api(
        cls,
        model_id: str,
        *,
        provider: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        runtime: Any = None,
        **options: Any,
    ) -> LangModel:
        return await cls.new(
            APIModel(model_id, provider, api_key, base_url, options), runtime=runtime
        )

    async def adelete(self) -> None:
        await self.runtime.adelete(self.name)

    def delete(self) -> None:
        self.runtime.delete(self.name)
