"""`LocalModel` and `APIModel` ask the plugin kit's first-result hooks which component type
serves a model id (tests named ``test_hook_<hook>``: tests/test_hooks.py looks for them)."""

from __future__ import annotations

import pytest
from ferrule import APIModel, LocalModel
from ferrule_kernel import Kernel, hookimpl
from ferrule_kit import kit_plugin
from ferrule_kit.errors import UnknownModelError
from ferrule_kit.models.lmspec import ModelRoute


def kernel(*plugins: object) -> Kernel:
    # kit_plugin adds the kit's hook specifications, as every kernel the top layer makes has
    return Kernel(plugins=[kit_plugin, *plugins], load_entry_points=False)


class Acme:
    """A provider answering for its prefix, or when named."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str | None]] = []

    @hookimpl
    def ferrule_resolve_api_model(self, model_id: str, provider: str | None) -> ModelRoute | None:
        self.asked.append((model_id, provider))
        if provider == "acme" or (provider is None and model_id.startswith("acme-")):
            return ModelRoute("acme_language_model", {"model": model_id, "temperature": 1.0})
        return None


class Preferred:
    @hookimpl(tryfirst=True)
    def ferrule_resolve_api_model(self, model_id: str, provider: str | None) -> ModelRoute:
        return ModelRoute("preferred_language_model", {"model": model_id})


def test_hook_resolve_api_model():
    acme = Acme()
    k = kernel(acme)
    route = APIModel("acme-1", api_key="k", options={"temperature": 0.5}).route(k)
    assert route.component_type == "acme_language_model"
    assert route.attributes == {"model": "acme-1", "temperature": 0.5, "api_key": "k"}
    assert APIModel("house-model", provider="acme").route(k).component_type == (
        "acme_language_model"
    )
    assert acme.asked == [("acme-1", None), ("house-model", "acme")]
    with pytest.raises(UnknownModelError, match="no well-known prefix"):
        APIModel("mystery").route(k)
    with pytest.raises(UnknownModelError, match="install ferrule-nobody"):
        APIModel("mystery", provider="nobody").route(k)
    # first-result: the first plugin to answer wins and the others are not asked
    acme.asked.clear()
    assert APIModel("acme-1").route(kernel(acme, Preferred())).component_type == (
        "preferred_language_model"
    )
    assert acme.asked == []


class CPUBackend:
    @hookimpl
    def ferrule_resolve_local_model(self, model_id: str) -> ModelRoute | None:
        if model_id == "tiny":
            return ModelRoute("cpu_language_model", {"model": model_id, "n_ctx": 512})
        return None


class GPUBackend:
    def __init__(self, present: bool) -> None:
        self.present = present

    @hookimpl(tryfirst=True)
    def ferrule_resolve_local_model(self, model_id: str) -> ModelRoute | None:
        return ModelRoute("gpu_language_model", {"model": model_id}) if self.present else None


def test_hook_resolve_local_model():
    route = LocalModel("tiny", options={"n_ctx": 4096}).route(kernel(CPUBackend()))
    assert route == ModelRoute("cpu_language_model", {"model": "tiny", "n_ctx": 4096})
    # the preferred backend answers where it can run, and passes where it cannot
    assert LocalModel("tiny").route(kernel(CPUBackend(), GPUBackend(True))).component_type == (
        "gpu_language_model"
    )
    assert LocalModel("tiny").route(kernel(CPUBackend(), GPUBackend(False))).component_type == (
        "cpu_language_model"
    )
    with pytest.raises(UnknownModelError, match="no installed backend runs local model 'huge'"):
        LocalModel("huge").route(kernel(CPUBackend()))
