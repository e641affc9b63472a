"""Discovery, routing and defining, on machines without a GPU.

Each check runs in a fresh interpreter, so ``sys.modules`` shows exactly what was
imported and the CUDA probe's cache starts empty. Where a check needs torch or
exllamav2 to *be installed*, it puts stand-in packages on PYTHONPATH: a ``torch`` whose
``cuda.is_available()`` answers what the test says, and an ``exllamav2`` that raises
if anything imports it. They stand in for what is installed, never for model output.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT_PRELUDE = """
import json, sys
from ferrule_kit import kit_plugin
from ferrule.models import LocalModel
from ferrule_kernel import Kernel
from ferrule_exllama import plugin


def kernel():
    # This plugin alone: other installed plugins (ferrule-llamacpp answers the same ids)
    # must not decide what these tests see.
    return Kernel(plugins=[kit_plugin, plugin], load_entry_points=False)
"""


def run(
    script: str,
    *,
    standins: Path | None = None,
    cuda: bool | None = None,
    absent: tuple[str, ...] = (),
) -> dict:
    """Run ``script`` in a fresh interpreter. ``absent`` packages count as not installed
    there (``sys.modules[name] = None``: find_spec answers None, import fails), whatever
    this environment has installed."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if standins is not None:
        env["PYTHONPATH"] = str(standins)
    if cuda is not None:
        env["STANDIN_CUDA"] = "1" if cuda else "0"
    hide = "".join(f"sys.modules[{name!r}] = None\n" for name in absent)
    code = "import sys\n" + hide + SCRIPT_PRELUDE + textwrap.dedent(script)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture
def standins(tmp_path) -> Path:
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(
        "import os\n"
        "class cuda:\n"
        "    @staticmethod\n"
        "    def is_available():\n"
        "        return os.environ.get('STANDIN_CUDA') == '1'\n"
    )
    (tmp_path / "exllamav2").mkdir()
    (tmp_path / "exllamav2" / "__init__.py").write_text(
        "raise ImportError('stand-in: routing and probing must not import exllamav2')\n"
    )
    return tmp_path


HEAVY = ("torch", "exllamav2", "huggingface_hub", "lmformatenforcer")

#: A Python expression, run in the child: the heavy top-level packages it has imported.
LOADED = f"sorted({{m.split('.')[0] for m, v in sys.modules.items() if v}} & set({HEAVY!r}))"


def test_importing_the_plugin_imports_nothing_heavy(standins):
    # Even with torch and exllamav2 installed, importing and discovering the plugin does
    # not import them: only routing asks torch for a CUDA device.
    script = f"""
    types = [t["name"] for t in kernel().component_types()]
    print(json.dumps({{"loaded": {LOADED}, "types": types}}))
    """
    for where in (None, standins):
        result = run(script, standins=where, cuda=True)
        assert result["loaded"] == []
        assert "exllama_language_model" in result["types"]


def test_the_component_type_says_when_requests_run_one_at_a_time():
    script = """
    (lm,) = [t for t in kernel().component_types() if t["name"] == "exllama_language_model"]
    print(json.dumps({"description": lm["description"]}))
    """
    description = run(script, absent=NEITHER)["description"]
    assert "batched only with flash-attn >= 2.5.7" in description
    assert "up to `parallel` at once" in description
    assert "one at a time" in description


def test_the_entry_point_names_the_plugin_module():
    (entry,) = [e for e in importlib.metadata.entry_points(group="ferrule") if e.name == "exllama"]
    assert entry.value == "ferrule_exllama.plugin"


ROUTE = f"""
hook = kernel().plugin_manager.hook.ferrule_resolve_local_model
routes = {{}}
for model in ["Qwen/Qwen3-0.6B", "Qwen/Qwen3-30B-A3B", "SmolLM2-135M-Instruct", "Qwen/Qwen3-8B-GGUF"]:
    route = hook(model_id=model)
    routes[model] = None if route is None else [route.component_type, route.attributes]
print(json.dumps({{"routes": routes, "loaded": {LOADED}}}))
"""


NEITHER = ("torch", "exllamav2")


def test_without_torch_or_exllamav2_it_routes_nothing():
    result = run(ROUTE, absent=NEITHER)
    assert set(result["routes"].values()) == {None}
    assert result["loaded"] == []


def test_without_a_cuda_device_it_routes_nothing(standins):
    result = run(ROUTE, standins=standins, cuda=False)
    assert set(result["routes"].values()) == {None}
    assert result["loaded"] == ["torch"]  # asked for a device; exllamav2 untouched


def test_with_cuda_it_claims_the_qwen3_ids_only(standins):
    result = run(ROUTE, standins=standins, cuda=True)
    assert result["routes"] == {
        "Qwen/Qwen3-0.6B": ["exllama_language_model", {"model": "Qwen/Qwen3-0.6B"}],
        "Qwen/Qwen3-30B-A3B": ["exllama_language_model", {"model": "Qwen/Qwen3-30B-A3B"}],
        "SmolLM2-135M-Instruct": None,
        "Qwen/Qwen3-8B-GGUF": None,
    }
    assert result["loaded"] == ["torch"]


def test_exllamav2_alone_does_not_import_anything(standins):
    result = run(ROUTE, standins=standins, cuda=True, absent=("torch",))
    assert set(result["routes"].values()) == {None}
    assert result["loaded"] == []


COMPETING = """
from ferrule_kit.models.lmspec import ModelRoute
from ferrule_kernel import hookimpl

class AnyMachineBackend:
    # Answers every id, as ferrule-llamacpp does for its table; registered last, so
    # without tryfirst it would be asked first.
    @hookimpl
    def ferrule_resolve_local_model(self, model_id):
        return ModelRoute("llamacpp_language_model", {"model": model_id})

k = kernel()
k.load_plugins()
k.register(AnyMachineBackend())
print(json.dumps({"route": LocalModel("Qwen/Qwen3-8B").route(k).component_type}))
"""


def test_where_cuda_is_present_exllama_is_asked_before_other_backends(standins):
    assert run(COMPETING, standins=standins, cuda=True)["route"] == "exllama_language_model"
    assert run(COMPETING, standins=standins, cuda=False)["route"] == "llamacpp_language_model"


DEFINE = f"""
from ferrule import Runtime
from ferrule_kernel import FerruleError
rt = Runtime(kernel=kernel())
try:
    rt.define("exllama_language_model", "lm", {{"model": "Qwen/Qwen3-0.6B"}})
    error = None
except FerruleError as exc:
    error = {{"type": type(exc).__name__, "kind": exc.kind, "message": exc.message, "details": exc.details}}
finally:
    rt.stop()
print(json.dumps({{"error": error, "loaded": {LOADED}}}))
"""


def test_defining_without_exllamav2_fails_at_once_pointing_to_llamacpp():
    result = run(DEFINE, absent=NEITHER)
    error = result["error"]
    assert error["type"] == "CudaUnavailableError" and error["kind"] == "cuda_unavailable"
    assert "torch and exllamav2" in error["message"]
    assert "pip install 'ferrule-exllama[cuda]'" in error["message"]
    assert "no CPU code path" in error["message"] and "ferrule-llamacpp" in error["message"]
    assert error["details"] == {"model": "Qwen/Qwen3-0.6B"}
    assert result["loaded"] == []  # at once: no weights looked up, nothing imported


def test_defining_without_a_cuda_device_fails_at_once_pointing_to_llamacpp(standins):
    result = run(DEFINE, standins=standins, cuda=False)
    error = result["error"]
    assert error["type"] == "CudaUnavailableError"
    assert "exllamav2 needs CUDA" in error["message"] and "no CUDA device" in error["message"]
    assert "ferrule-llamacpp" in error["message"]
    assert result["loaded"] == ["torch"]


def test_bad_attributes_are_refused_naming_the_field():
    script = """
    from ferrule import Runtime
    from ferrule_kernel import InvalidInputError
    out = {}
    rt = Runtime(kernel=kernel())
    for name, attributes in {
        "cache": {"model": "Qwen/Qwen3-8B", "cache": "q3"},
        "max_seq_len": {"model": "Qwen/Qwen3-8B", "max_seq_len": 100},
        "gpu_split": {"model": "Qwen/Qwen3-8B", "gpu_split": [20, 0]},
        "parallel": {"model": "Qwen/Qwen3-8B", "parallel": 0},
        "model": {},
    }.items():
        try:
            rt.define("exllama_language_model", name, attributes)
        except InvalidInputError as exc:
            out[name] = [e["path"] for e in exc.errors]
    rt.stop()
    print(json.dumps(out))
    """
    assert run(script, absent=NEITHER) == {
        "cache": ["$.cache"],
        "max_seq_len": ["$.max_seq_len"],
        "gpu_split": ["$.gpu_split"],
        "parallel": ["$.parallel"],
        "model": ["$.model"],
    }


def test_asking_for_a_model_it_has_no_weights_for_imports_nothing(standins):
    # LocalModel("SmolLM2-135M-Instruct") must not pay for importing torch.
    script = f"""
    hook = kernel().plugin_manager.hook.ferrule_resolve_local_model
    route = hook(model_id="SmolLM2-135M-Instruct")
    print(json.dumps({{"route": route, "loaded": {LOADED}}}))
    """
    assert run(script, standins=standins, cuda=True) == {"route": None, "loaded": []}


def test_a_torch_that_fails_to_import_routes_nothing_and_says_why(standins):
    (standins / "torch" / "__init__.py").write_text(
        "raise OSError('libcudart.so.12: cannot open')\n"
    )
    assert set(run(ROUTE, standins=standins)["routes"].values()) == {None}
    error = run(DEFINE, standins=standins)["error"]
    assert error["type"] == "CudaUnavailableError"
    assert "torch could not be imported (OSError: libcudart.so.12: cannot open)" in error["message"]
