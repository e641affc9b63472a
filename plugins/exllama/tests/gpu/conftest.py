"""What the GPU tests run on: a random model of Qwen3-0.6B's exact shape built here (FP16,
and an EXL2 quantization made by exllamav2's own converter), its float32 reference in
transformers, and the model loaded in raw exllamav2 and in ferrule.

No real Qwen3 weights are needed (or reachable: GPU machines may have no network). The
model follows ``shared/gpu/make_model.py`` and ``make_tokenizer.py`` of the first GPU
session: a byte-level BPE tokenizer with Qwen3's 26 special tokens at their real ids, and
random weights whose special-token embedding rows are zero (they get logit 0, below the
best regular token, so greedy replies never end early). Every norm weight is random as
well, so a norm applied the wrong way shows in the logits.

Only the standard library is imported here: collecting this folder where no GPU is
costs nothing (each fixture imports what it needs).
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ferrule_kit.testing.byte_level import byte_alphabet

#: Qwen/Qwen3-0.6B's config.json as transformers >= 5 writes it: ``rope_theta`` only inside
#: ``rope_parameters`` (exllamav2 alone would use 10000), every other key as Qwen ships it.
CONFIG: dict[str, Any] = {
    "architectures": ["Qwen3ForCausalLM"],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "bos_token_id": 151643,
    "dtype": "float16",
    "eos_token_id": 151645,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 1024,
    "initializer_range": 0.02,
    "intermediate_size": 3072,
    "max_position_embeddings": 40960,
    "max_window_layers": 28,
    "model_type": "qwen3",
    "num_attention_heads": 16,
    "num_hidden_layers": 28,
    "num_key_value_heads": 8,
    "rms_norm_eps": 1e-06,
    "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"},
    "sliding_window": None,
    "tie_word_embeddings": True,
    "transformers_version": "5.17.0",
    "use_cache": True,
    "use_sliding_window": False,
    "vocab_size": 151936,
}
ROPE_THETA = CONFIG["rope_parameters"]["rope_theta"]
#: Qwen3's regular tokens; its special tokens take the ids from here on.
N_REGULAR = 151643
#: Longest sequence the tests use (a 2.7k-token prompt and its reply).
MAX_SEQ_LEN = 4096
#: What ferrule's component caches: several such sequences at once (the batching tests).
CACHE_TOKENS = 4 * MAX_SEQ_LEN
#: Layers of the model the EXL2 variant quantizes: the FP16 model's first ones. exllamav2's
#: converter takes time in proportion to the layers (~5 minutes for all 28 on an H100),
#: and what the EXL2 checks are about, the fused kernels, is the same in every layer.
EXL2_LAYERS = 4


def random_ids(length: int) -> list[int]:
    """``length`` random regular token ids, the same on every run."""
    rng = random.Random(length)
    return [rng.randrange(N_REGULAR) for _ in range(length)]


#: Prompts of random regular token ids for the logit checks: one prefill chunk, and two
#: (exllamav2 prefills 2,048 tokens at a time; the second chunk attends to the first).
#: Distinct tokens matter: over one token repeated (what these prompts were until a GPU
#: run showed it, each id drawn from a fresh generator of the same seed) attention averages
#: identical values, so no mask, RoPE base or head norm can change the logits.
LOGIT_PROMPTS = {length: random_ids(length) for length in (256, 2700)}

#: Qwen3's added tokens in id order, and whether each is special.
ADDED_TOKENS = [
    ("<|endoftext|>", True),
    ("<|im_start|>", True),
    ("<|im_end|>", True),
    ("<|object_ref_start|>", True),
    ("<|object_ref_end|>", True),
    ("<|box_start|>", True),
    ("<|box_end|>", True),
    ("<|quad_start|>", True),
    ("<|quad_end|>", True),
    ("<|vision_start|>", True),
    ("<|vision_end|>", True),
    ("<|vision_pad|>", True),
    ("<|image_pad|>", True),
    ("<|video_pad|>", True),
    ("<tool_call>", False),
    ("</tool_call>", False),
    ("<|fim_prefix|>", True),
    ("<|fim_middle|>", True),
    ("<|fim_suffix|>", True),
    ("<|fim_pad|>", True),
    ("<|repo_name|>", True),
    ("<|file_sep|>", True),
    ("<tool_response>", False),
    ("</tool_response>", False),
    ("<think>", False),
    ("</think>", False),
]
#: A few real byte-pair merges. Letters in none of them (j k q u v x y z) encode one token
#: per character, which is how the tests build prompts of an exact length.
MERGES = [
    ("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("Ġ", "a"), ("o", "n"), ("e", "r"),
    ("Ġ", "s"), ("r", "e"), ("Ġ", "w"), ("a", "t"), ("e", "n"), ("Ġ", "o"), ("o", "r"),
    ("Ġ", "c"), ("i", "s"), ("e", "s"), ("Ġ", "b"), ("a", "n"), ("Ġ", "f"), ("in", "g"),
    ("Ġ", "m"), ("Ġ", "p"), ("Ġo", "f"), ("n", "d"), ("Ġa", "nd"), ("e", "d"), ("Ġ", '"'),
    ('"', ":"), ("Ġ", "{"), ("Ġ", "}"), ("Ċ", "Ċ"), ("Ġ", "l"), ("Ġ", "h"),
]  # fmt: skip
QWEN_PRETOKENIZE = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)


def write_tokenizer(directory: Path) -> None:
    """Qwen3's tokenizer files in shape: byte-level BPE, 151,643 regular tokens (the 256
    bytes, the merges, then filler words), the added tokens at their real ids."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
    from tokenizers import pre_tokenizers as pre

    vocab = {char: index for index, char in enumerate(byte_alphabet())}
    for left, right in MERGES:
        vocab.setdefault(left + right, len(vocab))
    letters, n = "abcdefghijklmnopqrstuvwxyz", 0
    while len(vocab) < N_REGULAR:
        word, k = "", n
        while True:
            word, k = letters[k % 26] + word, k // 26
            if k == 0:
                break
        vocab.setdefault("Ġq" + word, len(vocab))
        n += 1
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=MERGES, fuse_unk=False))
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre.Sequence(
        [
            pre.Split(Regex(QWEN_PRETOKENIZE), behavior="isolated", invert=False),
            pre.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    decoder = {}
    for offset, (content, special) in enumerate(ADDED_TOKENS):
        token = AddedToken(content, special=special, normalized=False)
        (tokenizer.add_special_tokens if special else tokenizer.add_tokens)([token])
        assert tokenizer.token_to_id(content) == N_REGULAR + offset, content
        decoder[str(N_REGULAR + offset)] = {
            "content": content,
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": special,
        }
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(directory / "tokenizer.json"))
    tokenizer_config = {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": decoder,
        "bos_token": None,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 131072,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }
    (directory / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2))
    generation = {"bos_token_id": 151643, "eos_token_id": [151645, 151643], "top_k": 20}
    (directory / "generation_config.json").write_text(json.dumps(generation, indent=2))


def hf_config(*, tied: bool, layers: int = CONFIG["num_hidden_layers"]) -> Any:
    """`CONFIG` as a transformers ``Qwen3Config`` (``tied``: embeddings shared with the head),
    with ``layers`` decoder layers."""
    from transformers import Qwen3Config

    shape = {
        key: CONFIG[key]
        for key in (
            "vocab_size",
            "hidden_size",
            "intermediate_size",
            "num_hidden_layers",
            "num_attention_heads",
            "num_key_value_heads",
            "head_dim",
            "max_position_embeddings",
            "rms_norm_eps",
            "bos_token_id",
            "eos_token_id",
            "attention_bias",
            "hidden_act",
        )
    }
    # transformers >= 5 reads rope_parameters, older versions rope_theta: give both.
    shape["num_hidden_layers"] = layers
    return Qwen3Config(
        **shape,
        tie_word_embeddings=tied,
        rope_theta=ROPE_THETA,
        rope_parameters=dict(CONFIG["rope_parameters"]),
    )


def build_model(directory: Path, tokenizer_dir: Path) -> dict[str, Any]:
    """Write the random FP16 model to ``directory``; return its weights in float32 on the
    CPU, with the (tied) head as ``lm_head.weight``."""
    import torch
    from safetensors.torch import save_file
    from transformers import Qwen3ForCausalLM

    torch.manual_seed(0)
    with torch.device("cuda"):
        model = Qwen3ForCausalLM(hf_config(tied=True)).float()
    norms = torch.Generator(device="cuda").manual_seed(7)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.endswith("norm.weight"):
                parameter.copy_(torch.rand(parameter.shape, generator=norms, device="cuda") * 1.5)
                parameter.add_(0.25)
        model.model.embed_tokens.weight[N_REGULAR:] = 0
    # Tied: the head is the embedding, stored once, as Qwen3-0.6B's checkpoint does.
    half = {
        name: tensor.detach().to("cpu", torch.float16).contiguous()
        for name, tensor in model.state_dict().items()
        if name != "lm_head.weight"
    }
    del model
    torch.cuda.empty_cache()
    directory.mkdir(parents=True, exist_ok=True)
    save_file(half, str(directory / "model.safetensors"), metadata={"format": "pt"})
    (directory / "config.json").write_text(json.dumps(CONFIG, indent=2))
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        shutil.copy(tokenizer_dir / name, directory / name)
    weights = {name: tensor.float() for name, tensor in half.items()}
    weights["lm_head.weight"] = weights["model.embed_tokens.weight"]
    return weights


def write_first_layers(
    weights: dict[str, Any], source: Path, directory: Path, layers: int
) -> dict[str, Any]:
    """The model in ``source`` (its float32 ``weights``) cut to its first ``layers`` decoder
    layers, written to ``directory``; return the cut model's weights."""
    import torch
    from safetensors.torch import save_file

    def kept(name: str) -> bool:
        parts = name.split(".")
        return not (parts[:2] == ["model", "layers"] and int(parts[2]) >= layers)

    cut = {name: tensor for name, tensor in weights.items() if kept(name)}
    half = {
        name: tensor.to(torch.float16).contiguous()
        for name, tensor in cut.items()
        if name != "lm_head.weight"  # tied, as in the source
    }
    directory.mkdir(parents=True, exist_ok=True)
    save_file(half, str(directory / "model.safetensors"), metadata={"format": "pt"})
    config = {**CONFIG, "num_hidden_layers": layers, "max_window_layers": layers}
    (directory / "config.json").write_text(json.dumps(config, indent=2))
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        shutil.copy(source / name, directory / name)
    return cut


def convert_exl2(source: Path, work: Path, out: Path) -> None:
    """Quantize ``source`` to EXL2 6.0 bpw (6-bit head) with exllamav2's own converter and
    its built-in calibration text (the settings of the first GPU session)."""
    command = [
        sys.executable,
        "-m",
        "exllamav2.conversion.convert_exl2",
        *("-i", str(source), "-o", str(work), "-cf", str(out)),
        *("-b", "6.0", "-hb", "6", "-l", "512", "-ml", "512"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    # The converter reports its own errors and exits 0: judge by what it wrote.
    if not (out / "config.json").is_file() or not list(out.glob("*.safetensors")):
        raise RuntimeError(
            f"exllamav2's converter wrote no model to {out} (exit {done.returncode}):\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )


def configure(path: Path, leave_out: str | None, torch_attention: bool) -> Any:
    """exllamav2's config for ``path`` as `ferrule_exllama.patches.configure` makes it, with
    every workaround this machine needs but ``leave_out`` (a correctness workaround's name).
    ``torch_attention``: as if neither flash-attn nor xformers were installed (exllamav2's
    own attention, where the causal-mask workaround applies)."""
    import attrs
    from exllamav2 import ExLlamaV2Config
    from ferrule_exllama import patches, workarounds

    if leave_out is None and not torch_attention:
        return patches.configure(path, MAX_SEQ_LEN)
    config = ExLlamaV2Config(str(path))
    config.arch_compat_overrides()
    config.max_seq_len = MAX_SEQ_LEN
    if torch_attention:
        config.no_flash_attn = config.no_xformers = True
    chosen = workarounds.plan(
        patches.installed(config),
        json.loads((path / "config.json").read_text()),
        config.architecture,
        config.arch.lm.headnorm,
    )
    overrides, fix = chosen.overrides, chosen.attention
    if leave_out == "head_norm":
        overrides = attrs.evolve(overrides, headnorm=None)
    elif leave_out == "rope_theta":
        overrides = attrs.evolve(overrides, rotary_embedding_base=None)
    elif leave_out == "causal_mask":
        overrides = attrs.evolve(overrides, no_sdpa=False)
        fix = fix and attrs.evolve(fix, causal_mask=False)
    overrides.apply(config)
    if fix is not None:
        patches.install()
        setattr(config, patches.ATTENTION, fix)
    return config


class Exl:
    """A model loaded in exllamav2 directly, as its own examples load one, with the cache
    and dynamic generator ferrule builds for it (paged exactly when ferrule's is).

    ``fixed``: exllamav2's config through `ferrule_exllama.patches.configure`, i.e. with
    ferrule's workarounds; otherwise exllamav2 exactly as shipped. ``leave_out`` and
    ``torch_attention``: see `configure`.
    """

    def __init__(
        self,
        path: Path,
        *,
        fixed: bool = True,
        leave_out: str | None = None,
        torch_attention: bool = False,
    ) -> None:
        from exllamav2 import ExLlamaV2, ExLlamaV2Cache, ExLlamaV2Config, ExLlamaV2Tokenizer, attn
        from exllamav2.generator import ExLlamaV2DynamicGenerator
        from ferrule_exllama import settings

        if fixed:
            config = configure(path, leave_out, torch_attention)
        else:
            config = ExLlamaV2Config(str(path))
            config.arch_compat_overrides()
            config.max_seq_len = MAX_SEQ_LEN
        self.config = config
        self.model = ExLlamaV2(config)
        # As large as ferrule's component's cache, so the two generators page alike.
        self.cache = ExLlamaV2Cache(self.model, max_seq_len=CACHE_TOKENS, lazy=True)
        self.model.load_autosplit(self.cache, progress=False)
        self.tokenizer = ExLlamaV2Tokenizer(config)
        self.paged = bool(attn.has_flash_attn_with_paged) and not config.no_flash_attn
        self.generator = ExLlamaV2DynamicGenerator(
            self.model, self.cache, self.tokenizer, **settings.generator_arguments(self.paged)
        )

    def logits(self, ids: list[int]) -> Any:
        """Float32 logits at every position of ``ids``, through a cache of its own,
        prefilled in chunks of 2,048 tokens (exllamav2's max_input_len) as the generator
        prefills: a 2.7k-token prompt has a second chunk, which attends to the first."""
        import torch
        from exllamav2 import ExLlamaV2Cache

        cache = ExLlamaV2Cache(self.model, max_seq_len=MAX_SEQ_LEN)
        logits = self.model.forward(torch.tensor([ids]), cache)[0].float()
        del cache
        return logits

    def dequantized(self) -> dict[str, Any]:
        """Every linear layer's weight, dequantized by exllamav2, as ``{key}.weight`` in
        float32 on the CPU (what its kernels multiply by, for the reference)."""
        from exllamav2.linear import ExLlamaV2Linear

        weights: dict[str, Any] = {}

        def collect(module: Any) -> None:
            if isinstance(module, ExLlamaV2Linear):
                weights[module.key + ".weight"] = module.get_weight_tensor_dq().T.float().cpu()
            for sub in module.submodules:
                collect(sub)

        for module in self.model.modules:
            collect(module)
        return weights

    def unload(self) -> None:
        import torch

        self.model.unload()
        del self.generator, self.cache, self.model
        torch.cuda.empty_cache()


def reference_logits(
    weights: dict[str, Any], prompts: dict[int, list[int]], layers: int
) -> dict[int, Any]:
    """transformers' float32 logits for each prompt, on a Qwen3 of ``layers`` layers holding
    ``weights`` (untied: ``lm_head.weight`` is among them), on the CPU."""
    import torch
    from transformers import Qwen3ForCausalLM

    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    # A float32 reference means float32 matmuls, not TF32.
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        with torch.device("cuda"):
            model = Qwen3ForCausalLM(hf_config(tied=False, layers=layers)).float().eval()
        model.load_state_dict(weights, strict=True)
        # The RoPE base transformers derived: the reference is only right at 1e6.
        inv_freq = model.model.rotary_emb.inv_freq.double()
        base = float(inv_freq[1] ** (-CONFIG["head_dim"] / 2))
        assert abs(base / ROPE_THETA - 1) < 1e-3, f"transformers' RoPE base is {base}"
        with torch.no_grad():
            logits = {
                name: model(torch.tensor([ids], device="cuda")).logits[0].float().cpu()
                for name, ids in prompts.items()
            }
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
    del model
    torch.cuda.empty_cache()
    return logits


# -- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def gpu_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("exllama-gpu")


@pytest.fixture(scope="session")
def fp16_weights(gpu_dir: Path) -> dict[str, Any]:
    """The FP16 model in ``gpu_dir / "fp16"``; its weights in float32."""
    write_tokenizer(gpu_dir / "tokenizer")
    return build_model(gpu_dir / "fp16", gpu_dir / "tokenizer")


@pytest.fixture(scope="session")
def exl2_source(gpu_dir: Path, fp16_weights: dict[str, Any]) -> dict[str, Any]:
    """The FP16 model's first `EXL2_LAYERS` layers in ``gpu_dir / "fp16-cut"``; their weights."""
    return write_first_layers(fp16_weights, gpu_dir / "fp16", gpu_dir / "fp16-cut", EXL2_LAYERS)


@pytest.fixture(scope="session")
def exl2_dir(gpu_dir: Path, exl2_source: dict[str, Any]) -> Path:
    convert_exl2(gpu_dir / "fp16-cut", gpu_dir / "exl2-work", gpu_dir / "exl2")
    return gpu_dir / "exl2"


@pytest.fixture(scope="session", params=["fp16", "exl2"])
def variant(request: pytest.FixtureRequest, gpu_dir: Path) -> str:
    """Each check runs on the FP16 weights (exllamav2's unfused torch path) and on their
    EXL2 quantization (its fused kernels)."""
    request.getfixturevalue("fp16_weights" if request.param == "fp16" else "exl2_dir")
    return str(request.param)


@pytest.fixture(scope="session")
def model_dir(variant: str, gpu_dir: Path) -> Path:
    return gpu_dir / variant


@pytest.fixture(scope="session")
def raw(model_dir: Path) -> Iterator[Exl]:
    """Raw exllamav2 with ferrule's workarounds, on the variant's weights."""
    exl = Exl(model_dir)
    yield exl
    exl.unload()


@pytest.fixture
def load_exl(model_dir: Path) -> Iterator[Any]:
    """Loads the variant's weights in raw exllamav2 (`Exl`'s keywords); unloads at the end."""
    loaded: list[Exl] = []

    def load(**options: Any) -> Exl:
        loaded.append(Exl(model_dir, **options))
        return loaded[-1]

    yield load
    for exl in loaded:
        exl.unload()


class TokenSpy:
    """The token ids each job of ferrule's generator streamed, by the job's prompt ids: read
    from the results on their way to the request (`ferrule_exllama.settings.result_fields`),
    which carry them but which ferrule does not pass on."""

    def __init__(self) -> None:
        self.by_prompt: dict[tuple[int, ...], list[int]] = {}

    def see(self, result: dict[str, Any]) -> None:
        job, ids = result.get("job"), result.get("token_ids")
        if job is None or ids is None:
            return
        prompt = tuple(job.sequences[0].input_ids.torch()[0].tolist())
        self.by_prompt.setdefault(prompt, []).extend(ids[0].tolist())

    def only(self) -> list[int]:
        (ids,) = self.by_prompt.values()
        return ids


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``with spy() as tokens:`` records the token ids of the jobs run inside it."""
    import contextlib

    from ferrule_exllama import settings

    original = settings.result_fields
    current: list[TokenSpy] = []

    def result_fields(result: dict[str, Any]) -> dict[str, Any]:
        for tokens in current:
            tokens.see(result)
        return original(result)

    monkeypatch.setattr(settings, "result_fields", result_fields)

    @contextlib.contextmanager
    def recording() -> Iterator[TokenSpy]:
        tokens = TokenSpy()
        current.append(tokens)
        try:
            yield tokens
        finally:
            current.remove(tokens)

    yield recording


@pytest.fixture(scope="session")
def ferrule_lm(model_dir: Path) -> Iterator[tuple[Any, str]]:
    """A Runtime with the variant's weights defined as ``exllama_language_model``."""
    from ferrule import Runtime

    rt = Runtime()
    attributes = {"model": str(model_dir), "max_seq_len": MAX_SEQ_LEN, "cache_tokens": CACHE_TOKENS}
    rt.define("exllama_language_model", "lm", attributes)
    yield rt, "lm"
    rt.stop()


@pytest.fixture(scope="session")
def reference_weights(request: pytest.FixtureRequest, variant: str, raw: Exl) -> dict[str, Any]:
    """The weights the reference runs: the FP16 model's, or for EXL2 those of the layers it
    quantized with every linear layer (the head included) as exllamav2 dequantizes it;
    embeddings and norms stay FP16 in EXL2."""
    if variant == "fp16":
        return dict(request.getfixturevalue("fp16_weights"))
    return {**request.getfixturevalue("exl2_source"), **raw.dequantized()}


@pytest.fixture(scope="session")
def plan(model_dir: Path) -> Any:
    """The workarounds ferrule chooses on this machine for the variant's weights."""
    from exllamav2 import ExLlamaV2Config
    from ferrule_exllama import patches, workarounds

    config = ExLlamaV2Config(str(model_dir))
    config.arch_compat_overrides()
    return workarounds.plan(
        patches.installed(config),
        json.loads((model_dir / "config.json").read_text()),
        config.architecture,
        config.arch.lm.headnorm,
    )


def layers_of(model_dir: Path) -> int:
    return int(json.loads((model_dir / "config.json").read_text())["num_hidden_layers"])


@pytest.fixture(scope="session")
def reference(
    reference_weights: dict[str, Any], model_dir: Path
) -> dict[int, tuple[list[int], Any]]:
    """Each logit prompt's length -> (its ids, transformers' float32 logits for it)."""
    logits = reference_logits(reference_weights, LOGIT_PROMPTS, layers_of(model_dir))
    return {length: (ids, logits[length]) for length, ids in LOGIT_PROMPTS.items()}


#: The benchmark's rows and what it ran on, filled by test_gpu.py's benchmark and written
#: as bench/results/exllama.md when the session ends.
REPORT: dict[str, Any] = {"rows": [], "concurrency": [], "facts": {}}


@pytest.fixture(scope="session")
def report(plan: Any, raw: Exl) -> dict[str, Any]:
    import importlib.metadata
    import platform

    import exllamav2
    import torch

    try:
        flash = f"flash-attn {importlib.metadata.version('flash-attn')}"
    except importlib.metadata.PackageNotFoundError:
        flash = "no flash-attn"
    REPORT["facts"] = {
        "gpu": torch.cuda.get_device_name(0),
        "stack": f"torch {torch.__version__} (CUDA {torch.version.cuda}), exllamav2 "
        f"{exllamav2.__version__}, {flash}, Python {platform.python_version()}",
        "workarounds": ", ".join(f"{d.workaround}: {d.action}" for d in plan.decisions),
        "batching": "batched (paged attention)" if raw.paged else "one at a time (unpaged)",
    }
    return REPORT


def report_section() -> str:
    import datetime

    facts, rows = REPORT["facts"], REPORT["rows"]
    lines = [
        "## ferrule-exllama on a GPU",
        "",
        f"_Measured {datetime.date.today().isoformat()} on {facts['gpu']}, {facts['stack']}; "
        "`nox -s gpu`._",
        "",
        "A random model of Qwen3-0.6B's shape built by the test (FP16; and EXL2 6.0 bpw made "
        f"by exllamav2's converter from its first {EXL2_LAYERS} layers, to keep the converter "
        "short), greedy.",
        "",
        f"Workarounds chosen: {facts['workarounds']}. Concurrent requests: {facts['batching']}.",
    ]
    if rows:
        lines += [
            "",
            "### ferrule against raw exllamav2",
            "",
            "128 new tokens; medians of 3 rounds after a warm-up, each round a new prompt "
            "(nothing cached). Raw: exllamav2's own dynamic generator in the same process, with "
            "the same workarounds. Time to first token includes the prefill.",
            "",
            "| weights | prompt tokens | raw tokens/s | ferrule tokens/s | ferrule / raw "
            "| raw TTFT ms | ferrule TTFT ms |",
            "|---|---|---|---|---|---|---|",
        ]
        for row in rows:
            lines.append(
                f"| {row['weights']} | {row['prompt_tokens']:,} | {row['raw_tps']:.1f} "
                f"| {row['ferrule_tps']:.1f} | {row['ferrule_tps'] / row['raw_tps']:.2f}x "
                f"| {row['raw_ttft'] * 1000:.0f} | {row['ferrule_ttft'] * 1000:.0f} |"
            )
    if REPORT["concurrency"]:
        lines += [
            "",
            "### Concurrent streams",
            "",
            "8 requests of 64 prompt tokens and 96 new tokens each, sent N at a time through "
            "ferrule's Runtime (`call_iter_method`, one thread per stream) to one component; "
            "one-at-a-time is a second component of the same weights defined with "
            "`parallel=1`, in the same run. Aggregate: all tokens over the wall time; time to "
            "first token from the moment the N were sent (p99 of 8 is about their maximum).",
            "",
            "| weights | streams | batched tokens/s | one-at-a-time tokens/s | batched / "
            "one-at-a-time | TTFT p50 / p99 ms, batched | TTFT p50 / p99 ms, one-at-a-time |",
            "|---|---|---|---|---|---|---|",
        ]
        for row in REPORT["concurrency"]:
            lines.append(
                f"| {row['weights']} | {row['streams']} | {row['batched_tps']:.0f} "
                f"| {row['serial_tps']:.0f} | {row['batched_tps'] / row['serial_tps']:.2f}x "
                f"| {row['batched_p50'] * 1000:.0f} / {row['batched_p99'] * 1000:.0f} "
                f"| {row['serial_p50'] * 1000:.0f} / {row['serial_p99'] * 1000:.0f} |"
            )
    return "\n".join(lines) + "\n"


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write the benchmark's section where ``nox -s bench``'s sections are (``nox -s gpu``
    then assembles docs/benchmarks.md from them)."""
    if not (REPORT["rows"] or REPORT["concurrency"]):
        return
    results = Path(__file__).resolve().parents[4] / "bench" / "results"
    if results.is_dir():
        (results / "exllama.md").write_text(report_section())


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if REPORT["rows"] or REPORT["concurrency"]:
        terminalreporter.write_sep("=", "ferrule-exllama benchmark")
        terminalreporter.write_line(report_section())
