"""Fixtures: the shipped SmolLM2 GGUF, a tiny Qwen3 GGUF written here, and runtimes."""

from __future__ import annotations

import http.server
import itertools
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from ferrule import Runtime
from ferrule_kit.errors import ModelError
from ferrule_kit.testing.byte_level import byte_alphabet
from ferrule_llamacpp import weights

# -- a tiny Qwen3-architecture GGUF ------------------------------------------------------

#: Qwen3's special tokens, with their GGUF token types as in Qwen's own GGUFs: the
#: ChatML markers are control tokens (end-of-generation for the two ends), the tags are
#: user-defined tokens (so they are text the parser sees).
CONTROL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
USER_DEFINED = [
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
]
#: A few byte-pair merges, so the tokenizer really merges (GPT-2 byte alphabet: Ġ is a space).
MERGES = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("Ġ", "a"), ("o", "n"), ("e", "r")]

N_EMBD, N_HEAD, N_HEAD_KV, HEAD_DIM, N_FF, N_LAYER, N_CTX = 64, 4, 2, 16, 128, 2, 1024


def write_tiny_qwen3(
    path: Path,
    *,
    script: list[str] = (),
    seed: int = 0,
    architecture: str = "qwen3",
    metadata: dict[str, float | int] | None = None,
    split_max_tensors: int = 0,
) -> dict[str, int]:
    """Write a 2-layer Qwen3 GGUF with a byte-level BPE vocabulary holding Qwen3's special
    tokens; returns the special tokens' ids.

    Without ``script`` the weights are random (special tokens are never the greedy choice).
    With ``script`` (pieces of text, each becoming one user-defined token unless it is a
    special token) the model is a bigram table: every layer's output projection is zero, so
    the next-token logits depend on the current token only, and greedy decoding after a
    prompt ending in a newline yields the script piece by piece.

    ``architecture="llama"`` writes the same model as a Llama one (no q/k norms): llama.cpp
    runs it through its chat template rather than the Qwen3 path. ``metadata`` adds
    float/int keys (``general.sampling.temp``, ...); ``split_max_tensors`` splits the file
    into shards as llama.cpp's gguf-split does (``path`` minus ``.gguf``, plus
    ``-00001-of-0000N.gguf``).
    """
    import gguf

    pieces = [p for p in script if p not in CONTROL + USER_DEFINED]
    tokens = byte_alphabet() + [a + b for a, b in MERGES] + CONTROL + USER_DEFINED + pieces
    types_ = (
        [gguf.TokenType.NORMAL] * (256 + len(MERGES))
        + [gguf.TokenType.CONTROL] * len(CONTROL)
        + [gguf.TokenType.USER_DEFINED] * (len(USER_DEFINED) + len(pieces))
    )
    ids = {t: tokens.index(t) for t in CONTROL + USER_DEFINED}
    n_vocab = len(tokens)

    writer = gguf.GGUFWriter(str(path), architecture, split_max_tensors=split_max_tensors)
    writer.add_name("tiny-qwen3-test")
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD_KV)
    writer.add_key_length(HEAD_DIM)
    writer.add_value_length(HEAD_DIM)
    writer.add_rope_freq_base(1_000_000.0)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(types_)
    writer.add_token_merges([f"{a} {b}" for a, b in MERGES])
    writer.add_eos_token_id(ids["<|im_end|>"])
    writer.add_pad_token_id(ids["<|endoftext|>"])
    writer.add_bos_token_id(ids["<|endoftext|>"])
    writer.add_add_bos_token(False)
    for key, value in (metadata or {}).items():
        if isinstance(value, int):
            writer.add_uint32(key, value)
        else:
            writer.add_float32(key, value)

    rng = np.random.default_rng(seed)

    def matrix(rows: int, cols: int, scale: float = 0.5) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) * scale).astype(np.float32)

    ones = lambda n: np.ones(n, dtype=np.float32)  # noqa: E731
    embeddings = matrix(n_vocab, N_EMBD, 1.0)
    if script:
        # Bigram table: the logit of b after a is large exactly when b follows a in the chain.
        output = matrix(n_vocab, N_EMBD, 0.01)
        newline = byte_alphabet()[ord("\n")]  # "Ċ": byte 10 in the byte-level alphabet
        chain = [tokens.index(newline), *(tokens.index(p) for p in script)]
        for a, b in itertools.pairwise(chain):
            output[b] = 4.0 * embeddings[a] / np.linalg.norm(embeddings[a])
        layer_out = 0.0
    else:
        # Special tokens get logit 0 while many others get large positive ones: greedy
        # decoding never ends early (max_tokens and stop strings decide) and never emits a
        # tag, so the streamed text is exactly what was generated.
        output = matrix(n_vocab, N_EMBD, 1.0)
        output[list(ids.values())] = 0.0
        layer_out = 0.5
    writer.add_tensor("token_embd.weight", embeddings)
    writer.add_tensor("output_norm.weight", ones(N_EMBD))
    writer.add_tensor("output.weight", output)
    for i in range(N_LAYER):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", ones(N_EMBD))
        writer.add_tensor(f"blk.{i}.attn_q.weight", matrix(N_HEAD * HEAD_DIM, N_EMBD))
        writer.add_tensor(f"blk.{i}.attn_k.weight", matrix(N_HEAD_KV * HEAD_DIM, N_EMBD))
        writer.add_tensor(f"blk.{i}.attn_v.weight", matrix(N_HEAD_KV * HEAD_DIM, N_EMBD))
        writer.add_tensor(
            f"blk.{i}.attn_output.weight", matrix(N_EMBD, N_HEAD * HEAD_DIM, layer_out)
        )
        if architecture == "qwen3":
            writer.add_tensor(f"blk.{i}.attn_q_norm.weight", ones(HEAD_DIM))
            writer.add_tensor(f"blk.{i}.attn_k_norm.weight", ones(HEAD_DIM))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", ones(N_EMBD))
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", matrix(N_FF, N_EMBD))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", matrix(N_FF, N_EMBD))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", matrix(N_EMBD, N_FF, layer_out))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return ids


#: What the scripted Qwen3 model says: it thinks, writes a line, calls a tool, ends its turn.
TOOL_TURN = [
    "<think>",
    "\nThe user wants the weather in Oslo.\n",
    "</think>",
    "\n\nLet me check.\n",
    "<tool_call>",
    '\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n',
    "</tool_call>",
    "<|im_end|>",
]


@pytest.fixture(scope="session")
def write_gguf() -> Callable[..., dict[str, int]]:
    """`write_tiny_qwen3`, for tests that write GGUF files of their own."""
    return write_tiny_qwen3


@pytest.fixture(scope="session")
def tiny_qwen3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gguf") / "tiny-qwen3.gguf"
    write_tiny_qwen3(path)
    return path


@pytest.fixture(scope="session")
def scripted_qwen3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Qwen3 GGUF whose greedy reply is `TOOL_TURN`."""
    path = tmp_path_factory.mktemp("gguf") / "scripted-qwen3.gguf"
    write_tiny_qwen3(path, script=TOOL_TURN)
    return path


@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    # Found as the backend finds it, in the ferrule-smollm2 data package: a plugin's tests
    # import no other plugin's package.
    try:
        return weights.locate("SmolLM2-135M-Instruct", download=False)
    except ModelError as exc:
        pytest.fail(f"these tests run the shipped SmolLM2 model: {exc}", pytrace=False)


# -- runtimes ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rt() -> Iterator[Runtime]:
    """One Runtime per test module (its components are loaded once)."""
    runtime = Runtime()
    yield runtime
    runtime.stop()


@pytest.fixture(scope="module")
def serve_http() -> Iterator[Callable[[type[http.server.BaseHTTPRequestHandler]], str]]:
    """``serve_http(handler)``: the base URL of a loopback HTTP server answering with
    ``handler`` in a thread of its own; all are shut down when the test module ends."""
    servers: list[http.server.ThreadingHTTPServer] = []

    def serve(handler: type[http.server.BaseHTTPRequestHandler]) -> str:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()
