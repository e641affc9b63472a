"""all-MiniLM-L6-v2 in numpy: a 6-layer BERT encoder, mean pooling and L2 normalisation,
exactly as sentence-transformers runs it (``tests/test_minilm.py`` checks the vectors
against ones sentence-transformers computed).

Why numpy and not torch or onnxruntime: the package ships safetensors, which numpy reads
directly (a JSON header, then raw little-endian arrays); torch would add hundreds of
megabytes to every install for the same arithmetic, and no registry package ships this
model as ONNX. The matrix products (nearly all the work) run in numpy's BLAS, one batch
per thread (`ferrule_minilm.embedder`); texts are sorted by length and batched so that
padding costs little.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np

WEIGHTS = Path(__file__).with_name("weights")
MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384
#: sentence-transformers' max_seq_length for this model: longer texts are truncated.
MAX_TOKENS = 256
LAYER_NORM_EPS = 1e-12

#: Floats per block of the element-wise passes (GELU, softmax): 256 KiB, within L2.
_BLOCK = 65536

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a ``.safetensors`` file, as arrays viewing one read of the file."""
    data = path.read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    base = 8 + size
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        start, end = entry["data_offsets"]
        array = np.frombuffer(data, dtype=_DTYPES[entry["dtype"]], count=-1, offset=base + start)
        count = (end - start) // array.itemsize
        tensors[name] = array[:count].reshape(entry["shape"])
    return tensors


def _gelu(x: np.ndarray) -> np.ndarray:
    """GELU with erf, as BERT was trained (not the tanh approximation), in place.

    numpy has no erf: Abramowitz & Stegun 7.1.26 gives it with an absolute error below
    1.5e-7, under float32's resolution of the result. ``gelu(x) = x (1 + erf(x/sqrt 2)) / 2
    = max(x, 0) - |x| erfc(|x|/sqrt 2) / 2``, and A&S write ``erfc(z) = P(t) exp(-z^2)``
    with ``t = 1 / (1 + p z)``; the halving is folded into P's coefficients. In place,
    because this runs on the largest activation (tokens x 1536): each pass over it costs
    about as much as the arithmetic.
    """
    magnitude = np.abs(x)
    t = magnitude * np.float32(0.3275911 * 0.7071067811865476)
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * np.float32(0.5 * 1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(0.5 * c)
        poly *= t
    gauss = np.square(x, out=t)  # t is spent: exp(-x^2 / 2) = exp(-z^2)
    gauss *= np.float32(-0.5)
    np.exp(gauss, out=gauss)
    poly *= gauss
    poly *= magnitude
    np.maximum(x, 0, out=x)
    x -= poly
    return x


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """Layer normalisation of each row, in cache-sized blocks, in place."""
    rows = max(1, _BLOCK // x.shape[-1])
    for i in range(0, x.shape[0], rows):
        block = x[i : i + rows]
        block -= block.mean(axis=-1, keepdims=True)
        variance = np.mean(block * block, axis=-1, keepdims=True)
        variance += LAYER_NORM_EPS
        block /= np.sqrt(variance)
        block *= weight
        block += bias
    return x


class _Layer:
    def __init__(self, t: dict[str, np.ndarray], prefix: str, heads: int) -> None:
        def linear(name: str) -> tuple[np.ndarray, np.ndarray]:
            # torch stores Linear weights as (out, in); x @ W needs (in, out), contiguous.
            return (
                np.ascontiguousarray(t[f"{prefix}.{name}.weight"].T),
                t[f"{prefix}.{name}.bias"],
            )

        q, k, v = (linear(f"attention.self.{n}") for n in ("query", "key", "value"))
        # Attention divides the scores by sqrt(head size): done once here, on the query.
        scale = np.float32(1.0 / np.sqrt(q[0].shape[1] // heads))
        # one product for Q, K and V together
        self.qkv_w = np.ascontiguousarray(np.concatenate([q[0] * scale, k[0], v[0]], axis=1))
        self.qkv_b = np.concatenate([q[1] * scale, k[1], v[1]])
        self.heads = heads
        self.out_w, self.out_b = linear("attention.output.dense")
        self.ln1 = (
            t[f"{prefix}.attention.output.LayerNorm.weight"],
            t[f"{prefix}.attention.output.LayerNorm.bias"],
        )
        self.up_w, self.up_b = linear("intermediate.dense")
        self.down_w, self.down_b = linear("output.dense")
        self.ln2 = (t[f"{prefix}.output.LayerNorm.weight"], t[f"{prefix}.output.LayerNorm.bias"])

    def __call__(self, x: np.ndarray, mask_bias: np.ndarray | None, batch: int) -> np.ndarray:
        """``x``: (batch * length, hidden), kept 2-D so each product is one BLAS call;
        ``mask_bias``: (batch, 1, 1, length), or None when no sequence is padded."""
        tokens, hidden = x.shape
        heads = self.heads
        length, size = tokens // batch, hidden // heads
        qkv = x @ self.qkv_w
        qkv += self.qkv_b
        # (batch, length, 3, heads, size) -> three contiguous (batch, heads, length, size):
        # numpy hands batched products to BLAS only for contiguous matrices (K's transpose
        # is a view BLAS reads as is).
        qkv = np.ascontiguousarray(
            qkv.reshape(batch, length, 3, heads, size).transpose(2, 0, 3, 1, 4)
        )
        q, k_t, v = qkv[0], qkv[1].transpose(0, 1, 3, 2), qkv[2]
        # The context lands in (batch, length, heads, size) order: the next product's input.
        context = np.empty((batch, length, heads, size), dtype=np.float32)
        by_head = context.transpose(0, 2, 1, 3)
        # A few sequences at a time: the softmax makes several passes over its scores,
        # which then stay in the CPU's cache instead of streaming from memory.
        step = max(1, _BLOCK // (heads * length * length))
        for i in range(0, batch, step):
            scores = q[i : i + step] @ k_t[i : i + step]
            if mask_bias is not None:
                scores += mask_bias[i : i + step]
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            # softmax(s) @ v = (exp(s) @ v) / sum(exp(s)): dividing the (length, size)
            # product costs length / size times fewer divisions than the scores.
            total = scores.sum(axis=-1, keepdims=True)
            np.matmul(scores, v[i : i + step], out=by_head[i : i + step])
            by_head[i : i + step] /= total
        attended = context.reshape(tokens, hidden) @ self.out_w
        attended += self.out_b
        attended += x
        x = _layer_norm(attended, *self.ln1)
        up = x @ self.up_w
        up += self.up_b
        rows = max(1, _BLOCK // up.shape[1])
        for i in range(0, tokens, rows):  # in cache-sized blocks, as the softmax above
            _gelu(up[i : i + rows])
        down = up @ self.down_w
        down += self.down_b
        down += x
        return _layer_norm(down, *self.ln2)


class MiniLM:
    """The encoder: token ids in, unit-length sentence vectors out."""

    def __init__(self, weights: Path = WEIGHTS) -> None:
        config: dict[str, Any] = json.loads((weights / "config.json").read_text())
        t = read_safetensors(weights / "model.safetensors")
        heads = int(config["num_attention_heads"])
        self.word = t["embeddings.word_embeddings.weight"]
        self.position = t["embeddings.position_embeddings.weight"]
        self.token_type = t["embeddings.token_type_embeddings.weight"][0]
        self.ln = (t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])
        self.layers = [
            _Layer(t, f"encoder.layer.{i}", heads) for i in range(int(config["num_hidden_layers"]))
        ]

    def encode(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``ids`` and ``mask`` (batch, length) -> (batch, 384) float32 unit vectors."""
        batch, length = ids.shape
        x = self.word[ids.reshape(-1)] + np.tile(self.position[:length], (batch, 1))
        x += self.token_type
        x = _layer_norm(x, *self.ln)
        # padding gets a large negative bias, so softmax gives it no weight
        mask_f = mask.astype(np.float32)
        mask_bias = None
        if not mask_f.all():
            mask_bias = ((1.0 - mask_f) * np.float32(-1e9))[:, None, None, :]
        for layer in self.layers:
            x = layer(x, mask_bias, batch)
        hidden = x.reshape(batch, length, -1)
        summed = (hidden * mask_f[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(mask_f.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
