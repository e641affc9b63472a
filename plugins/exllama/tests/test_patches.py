"""The workarounds applied to exllamav2's real code, on the CPU: no GPU needed.

exllamav2's Python is importable without CUDA once its compiled extension is stood in for
(`exllamav2.ext`: only attention's Python and the config reader run here, and they call
none of it). Each check runs in a fresh interpreter, so the stand-in never reaches
another test (the GPU tests import the real extension). Needs torch (a CPU build will do)
and exllamav2 installed: ``nox -s gpu`` installs both and runs this module too; where they
are missing the module is skipped.

Attention is checked against a float32 reference with an explicit lower-right causal mask,
on query/key/value tensors of Qwen3's attention shape in miniature (grouped KV heads).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(name) is None for name in ("torch", "exllamav2")),
    reason="needs torch (a CPU build will do) and exllamav2 installed; nox -s gpu installs them",
)

PRELUDE = """
import json, math, sys, types
import torch

# exllamav2 compiles its CUDA extension when exllamav2.ext is imported: stand in for it.
ext = types.ModuleType("exllamav2.ext")
ext.exllamav2_ext = types.SimpleNamespace()
ext.none_tensor = torch.empty((1, 1), device="meta")
sys.modules["exllamav2.ext"] = ext

from exllamav2.attn import ExLlamaV2Attention
from ferrule_exllama import patches, workarounds
from ferrule_exllama.workarounds import AttentionFix

SHIPPED = ExLlamaV2Attention._attn_torch
HEADS, KV_HEADS, DIM = 4, 2, 16
torch.manual_seed(0)


class Layer:
    # What _attn_torch reads from its ExLlamaV2Attention.
    layer_idx = 0
    num_key_value_groups = HEADS // KV_HEADS
    sliding_window = 0
    scaling = DIM ** -0.5
    repeat_kv = ExLlamaV2Attention.repeat_kv


def config(**fields):
    # What _attn_torch reads from its ExLlamaV2Config (exllamav2's defaults).
    return types.SimpleNamespace(**{"no_sdpa": False, "attn_logit_softcapping": None, **fields})


def states(past, q_len):
    q = torch.randn(1, q_len, HEADS, DIM).half()
    k = torch.randn(1, past + q_len, KV_HEADS, DIM).half()
    v = torch.randn(1, past + q_len, KV_HEADS, DIM).half()
    return q, k, v


def reference(q, k, v, past, causal=True):
    q_len, kv_len = q.shape[1], k.shape[1]
    q, k, v = (t.float().transpose(1, 2) for t in (q, k, v))
    k = k.repeat_interleave(HEADS // KV_HEADS, dim=1)
    v = v.repeat_interleave(HEADS // KV_HEADS, dim=1)
    scores = q @ k.transpose(-1, -2) * Layer.scaling
    if causal:
        seen = torch.arange(kv_len)[None, :] <= torch.arange(q_len)[:, None] + past
        scores = scores.masked_fill(~seen, -math.inf)
    out = scores.softmax(-1) @ v
    return out.transpose(1, 2).reshape(1, q_len, HEADS * DIM)


def attend(method, q, k, v, past, cfg, input_mask=None):
    q_len = q.shape[1]
    params = ExLlamaV2Attention.Params(1, q_len, past, input_mask=input_mask)
    return method(Layer(), 1, q_len, q, k, v, params, cfg).float()


def error(out, ref):
    return round((out - ref).abs().max().item(), 5)
"""

#: (cached tokens, new tokens): a first prefill chunk, a later chunk (the generator prefills
#: 2,048 tokens at a time), a decode step.
CHUNKS = [(0, 7), (5, 7), (9, 1)]


def run(script: str) -> dict:
    # Attention as without flash-attn and xformers, whatever this machine has installed.
    env = {**os.environ, "EXLLAMA_NO_FLASH_ATTN": "1", "EXLLAMA_NO_XFORMERS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def per_chunk(value: str, setup: str = "") -> dict:
    """``value``, a Python expression run after ``setup`` with each chunk's ``q, k, v`` and
    ``past`` at hand, for every chunk of `CHUNKS`, keyed ``"past+q_len"``."""
    return run(
        textwrap.dedent(setup)
        + f"""
out = {{}}
for past, q_len in {CHUNKS!r}:
    q, k, v = states(past, q_len)
    out[f"{{past}}+{{q_len}}"] = {value}
print(json.dumps(out))
"""
    )


def test_exllamav2_as_shipped_prefills_without_a_causal_mask():
    # The bug the replacement exists for: SDPA with no mask, attending to later tokens.
    result = per_chunk(
        "[error(shipped := attend(SHIPPED, q, k, v, past, config()), reference(q, k, v, past)),"
        " error(shipped, reference(q, k, v, past, causal=False))]"
    )
    for chunk, (causal, noncausal) in result.items():
        assert noncausal < 0.01, chunk
        if chunk != "9+1":  # one new token may see every key: no mask is right there
            assert causal > 0.1, chunk


def test_the_replacement_attends_causally_in_every_chunk():
    result = per_chunk(
        "error(attend(ExLlamaV2Attention._attn_torch, q, k, v, past, fixed),"
        " reference(q, k, v, past))",
        setup="""
        patches.install()
        fixed = config(ferrule_attention=AttentionFix(causal_mask=True, exclude_cudnn=False))
        """,
    )
    assert set(result) == {"0+7", "5+7", "9+1"}
    assert all(error < 0.01 for error in result.values()), result


def test_the_no_sdpa_fallback_attends_causally_in_every_chunk():
    # config.no_sdpa: exllamav2's own matmul attention with its explicit mask.
    result = per_chunk(
        "error(attend(SHIPPED, q, k, v, past, config(no_sdpa=True)), reference(q, k, v, past))"
    )
    assert all(error < 0.01 for error in result.values()), result


def test_models_ferrule_did_not_configure_run_exllamav2s_own_attention():
    result = run(
        """
        patches.install()
        q, k, v = states(0, 7)
        same = torch.equal(
            attend(ExLlamaV2Attention._attn_torch, q, k, v, 0, config()),
            attend(SHIPPED, q, k, v, 0, config()),
        )
        print(json.dumps({"same": same}))
        """
    )
    assert result == {"same": True}


def test_a_padding_mask_is_applied_as_exllamav2s_matmul_attention_applies_it():
    # Batched inputs with an input mask (not the generator's way, but exllamav2's API):
    # the replacement passes exllamav2's own mask, as its matmul attention adds it.
    result = run(
        """
        patches.install()
        q, k, v = states(3, 6)
        padding = torch.zeros(1, 9).half()
        padding[:, :2] = -65504.0
        fixed = config(ferrule_attention=AttentionFix(causal_mask=True, exclude_cudnn=False))
        ours = attend(ExLlamaV2Attention._attn_torch, q, k, v, 3, fixed, padding)
        matmul = attend(SHIPPED, q, k, v, 3, config(no_sdpa=True), padding)
        unpadded = attend(SHIPPED, q, k, v, 3, config(no_sdpa=True))
        print(json.dumps({"ours": error(ours, matmul), "padding_matters": error(matmul, unpadded)}))
        """
    )
    assert result["padding_matters"] > 0.1
    assert result["ours"] < 0.01, result


def test_cudnn_attention_is_off_exactly_during_the_calls_that_exclude_it():
    result = run(
        """
        from torch.overrides import TorchFunctionMode

        seen = []

        class Spy(TorchFunctionMode):
            # Sees each SDPA call without replacing the function (the causal mask's own
            # dispatch recognises the function by identity).
            def __torch_function__(self, func, types, args=(), kwargs=None):
                if func is torch.nn.functional.scaled_dot_product_attention:
                    seen.append(torch.backends.cuda.cudnn_sdp_enabled())
                return func(*args, **(kwargs or {}))

        Spy().__enter__()
        patches.install()
        method = ExLlamaV2Attention._attn_torch
        before = torch.backends.cuda.cudnn_sdp_enabled()
        q, k, v = states(0, 5)
        attend(method, q, k, v, 0, config(ferrule_attention=AttentionFix(True, True)))
        attend(method, q, k, v, 0, config(ferrule_attention=AttentionFix(False, True)))
        attend(method, q, k, v, 0, config(ferrule_attention=AttentionFix(True, False)))
        try:  # a failing call restores the switch too
            attend(method, q[..., :3], k, v, 0, config(ferrule_attention=AttentionFix(True, True)))
        except RuntimeError:
            pass
        print(json.dumps({
            "before": before, "seen": seen, "after": torch.backends.cuda.cudnn_sdp_enabled()
        }))
        """
    )
    assert result == {"before": True, "seen": [False, False, True, False], "after": True}


def test_configure_applies_the_plan_to_exllamav2s_own_config(tmp_path):
    # A one-layer Qwen3 in miniature, with config.json as transformers >= 5 writes it.
    result = run(
        f"""
        from pathlib import Path
        from exllamav2 import ExLlamaV2Config
        from safetensors.torch import save_file

        model = Path({str(tmp_path)!r})
        hidden, heads, kv_heads, head_dim, ffn, vocab = 32, 4, 2, 8, 64, 64
        (model / "config.json").write_text(json.dumps({{
            "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
            "hidden_size": hidden, "intermediate_size": ffn, "num_hidden_layers": 1,
            "num_attention_heads": heads, "num_key_value_heads": kv_heads, "head_dim": head_dim,
            "vocab_size": vocab, "max_position_embeddings": 4096, "rms_norm_eps": 1e-6,
            "tie_word_embeddings": True, "bos_token_id": 1, "eos_token_id": 2,
            "rope_parameters": {{"rope_theta": 1000000.0, "rope_type": "default"}},
        }}))
        layer = "model.layers.0."
        shapes = {{
            "model.embed_tokens.weight": (vocab, hidden), "model.norm.weight": (hidden,),
            layer + "input_layernorm.weight": (hidden,),
            layer + "post_attention_layernorm.weight": (hidden,),
            layer + "self_attn.q_proj.weight": (heads * head_dim, hidden),
            layer + "self_attn.k_proj.weight": (kv_heads * head_dim, hidden),
            layer + "self_attn.v_proj.weight": (kv_heads * head_dim, hidden),
            layer + "self_attn.o_proj.weight": (hidden, heads * head_dim),
            layer + "self_attn.q_norm.weight": (head_dim,),
            layer + "self_attn.k_norm.weight": (head_dim,),
            layer + "mlp.gate_proj.weight": (ffn, hidden),
            layer + "mlp.up_proj.weight": (ffn, hidden),
            layer + "mlp.down_proj.weight": (hidden, ffn),
        }}
        save_file({{k: torch.zeros(s).half() for k, s in shapes.items()}},
                  str(model / "model.safetensors"))

        plain = ExLlamaV2Config(str(model))
        found = patches.installed(plain)
        configs = [patches.configure(model, 2048), patches.configure(model)]
        fixed = configs[0]
        print(json.dumps({{
            "plain": [plain.rotary_embedding_base, plain.arch.lm.headnorm, plain.no_sdpa],
            "fixed": [fixed.rotary_embedding_base, fixed.arch.lm.headnorm, fixed.no_sdpa,
                      fixed.max_seq_len],
            "attention": [repr(getattr(c, patches.ATTENTION, None)) for c in configs],
            "planned": repr(workarounds.plan(
                found, json.loads((model / "config.json").read_text()), plain.architecture,
                plain.arch.lm.headnorm,
            ).attention),
            "shipped_bug_seen": workarounds.BUGGY_CONDITION in found.attn_torch_source,
            "params": list(found.attn_torch_params) == list(workarounds.ATTN_TORCH_PARAMS),
            "installed_once": ExLlamaV2Attention._attn_torch.__wrapped__ is SHIPPED,
            "shipped_still_read": patches.exllamav2_attn_torch() is SHIPPED,
        }}))
        """
    )
    # exllamav2 alone: RoPE base 10000, LayerNorm head norm — the two bugs.
    assert result["plain"] == [10000.0, "layernorm", False]
    assert result["fixed"] == [1000000.0, "rmsnorm", False, 2048]
    # The causal mask is replaced; cuDNN attention is avoided only on a GPU that gets it.
    assert result["planned"].startswith("AttentionFix(causal_mask=True, exclude_cudnn=")
    assert result["attention"] == [result["planned"]] * 2
    assert result["shipped_bug_seen"] and result["params"]
    assert result["installed_once"] and result["shipped_still_read"]
