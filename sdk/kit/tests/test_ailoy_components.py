"""The kit's Ailoy 0.1 component helpers: `vector_store_type(..., ailoy_v0_1=True)`
(Ailoy's methods beside the contract's, with Ailoy's wire shapes; the stores themselves
are checked by `ferrule_kit.testing.ailoy_vectors`, in ferrule-faiss's and ferrule-chroma's
tests), `Policy.check_host` (the address check of a URL another library connects to),
and `ailoy_embedding_model_type` / `check_model` (``tvm_embedding_model``)."""

from __future__ import annotations

import pytest
from ferrule_kernel import InvalidInputError
from ferrule_kit.addresses import ALLOW_VARIABLE, AddressRefusedError, Policy
from ferrule_kit.ailoy_embedding import AiloyEmbeddingAttributes, check_model
from ferrule_kit.embedspec import ailoy_embedding_model_type
from ferrule_kit.vectorspec import AILOY_V0_1_METHODS, METHODS, vector_store_type


def test_ailoy_methods_join_the_contract_s_when_asked() -> None:
    plain = vector_store_type("s", "m:create", "m:Attributes")
    assert [m.name for m in plain.methods] == [name for name, *_ in METHODS]
    both = vector_store_type("s", "m:create", "m:Attributes", ailoy_v0_1=True)
    ailoy = {m.name: m for m in both.methods[len(METHODS) :]}
    assert list(ailoy) == ["insert", "insert_many", "get_by_id", "retrieve", "remove", "clear"]
    assert len(AILOY_V0_1_METHODS) == len(ailoy)
    assert ailoy["insert_many"].array_input == "items"
    assert {n for n, m in ailoy.items() if m.value_output} == {"get_by_id", "remove", "clear"}
    assert all(m.array_input is None and not m.value_output for m in both.methods[: len(METHODS)])


def test_ailoy_methods_are_for_blocking_stores() -> None:
    with pytest.raises(ValueError, match="blocking"):
        vector_store_type("s", "m:create", "m:Attributes", blocking=False, ailoy_v0_1=True)


def test_check_host_refuses_loopback_in_every_spelling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ALLOW_VARIABLE, raising=False)
    policy = Policy.from_environment()
    for host in ("127.0.0.1", "localhost", "2130706433", "::1", "169.254.169.254"):
        with pytest.raises(AddressRefusedError):
            policy.check_host(host)
    with pytest.raises(AddressRefusedError, match="does not resolve"):
        policy.check_host("no-such-host.invalid")
    policy.check_host("8.8.8.8")  # a public address, spelled: nothing to resolve


def test_check_host_takes_what_the_host_allows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ALLOW_VARIABLE, "localhost, 10.0.0.0/8")
    policy = Policy.from_environment()
    policy.check_host("localhost")
    policy.check_host("10.1.2.3")
    with pytest.raises(AddressRefusedError):
        policy.check_host("127.0.0.1")  # localhost is allowed by name, not its address


def test_ailoy_embedding_model_type_has_infer_beside_the_contract_s() -> None:
    spec = ailoy_embedding_model_type("m:create")
    assert spec.name == "tvm_embedding_model"
    assert [m.name for m in spec.methods] == ["embed", "info", "infer"]


def test_check_model_follows_the_aliases(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = {"all-minilm-l6-v2"}
    monkeypatch.setenv("FERRULE_MODEL_ALIASES", "BAAI/bge-m3=all-MiniLM-L6-v2")
    assert check_model(AiloyEmbeddingAttributes(), runs) == "all-MiniLM-L6-v2"
    monkeypatch.setenv("FERRULE_MODEL_ALIASES", "BAAI/bge-m3=intfloat/e5-large")
    with pytest.raises(InvalidInputError, match="'intfloat/e5-large' by alias") as refused:
        check_model(AiloyEmbeddingAttributes(), runs)
    assert [e["path"] for e in refused.value.errors] == ["model"]
