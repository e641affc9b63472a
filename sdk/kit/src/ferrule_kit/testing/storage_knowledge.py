"""Storage conformance for knowledge contents (``upsert_knowledge``, ``get_knowledge``,
``list_knowledge``, ``delete_knowledge``), mixed into
`ferrule_kit.testing.storage.StorageConformance`: rows written and read back exactly, a
field left out keeping its stored value, lists filtered by knowledge base, sorted and paged
with their total, deletes, and bad input named by field."""

from __future__ import annotations

import pytest
from ferrule_kernel import InvalidInputError

from ferrule_kit.stores.storage import DeletedResult, KnowledgeListResult, KnowledgeResult

from .storage_fixtures import StorageUnderTest, new_id

__all__ = ["StorageKnowledgeChecks"]


class StorageKnowledgeChecks:
    """The knowledge-content methods of the storage contract, checked."""

    def test_storage_knowledge_rows_round_trip(self, storage: StorageUnderTest) -> None:
        row = {
            "id": f"file:/docs/{new_id('k')}.md",
            "name": "guide.md",
            "description": "the guide",
            "metadata": {"topic": "tides", "year": 1890, "tags": ["a", "b"], "nested": {"x": 1}},
            "type": ".md",
            "size": 1234,
            "linked_to": "docs",
            "access_count": 0,
            "status": "processing",
            "status_message": "",
            "created_at": 1_700_000_000,
            "updated_at": 1_700_000_000,
            "external_id": None,
        }
        written = storage.call("upsert_knowledge", {"content": row}, KnowledgeResult)
        assert written == {"content": row}
        assert storage.call("get_knowledge", {"id": row["id"]}, KnowledgeResult) == written
        # the fields left out (None) keep what is stored
        done = {"id": row["id"], "status": "completed", "updated_at": 1_700_000_005}
        changed = storage.call("upsert_knowledge", {"content": done})["content"]
        assert changed == {**row, "status": "completed", "updated_at": 1_700_000_005}
        missing = storage.call("get_knowledge", {"id": "file:/nowhere"})
        assert missing == {"content": None}
        deleted = storage.call("delete_knowledge", {"id": row["id"]}, DeletedResult)
        assert deleted == {"deleted": 1}
        assert storage.call("delete_knowledge", {"id": row["id"]}) == {"deleted": 0}

    def test_storage_knowledge_lists_filter_sort_and_page(self, storage: StorageUnderTest) -> None:
        base, other = new_id("kb"), new_id("kb")
        for index, (name, size) in enumerate([("b", 30), ("a", 10), ("c", 20)]):
            content = {"id": f"{base}-{name}", "name": name, "size": size, "linked_to": base}
            storage.call("upsert_knowledge", {"content": {**content, "created_at": 100 + index}})
        storage.call("upsert_knowledge", {"content": {"id": f"{other}-x", "linked_to": other}})

        def names(**inputs: object) -> tuple[list[str], int]:
            out = storage.call("list_knowledge", {"linked_to": base, **inputs}, KnowledgeListResult)
            return [c["name"] for c in out["contents"]], out["total"]

        assert names() == (["b", "a", "c"], 3)  # oldest first
        assert names(sort_by="name", sort_order="asc") == (["a", "b", "c"], 3)
        assert names(sort_by="size") == (["b", "c", "a"], 3)  # descending by default
        assert names(sort_by="name", sort_order="asc", limit=2, page=2) == (["c"], 3)
        everyone = storage.call("list_knowledge", {})
        assert {f"{other}-x", f"{base}-a"} <= {c["id"] for c in everyone["contents"]}

    @pytest.mark.parametrize(
        ("method", "inputs", "field"),
        [
            ("upsert_knowledge", {"content": {"id": ""}}, "id"),
            ("upsert_knowledge", {"content": {"id": "k", "size": -1}}, "size"),
            ("list_knowledge", {"sort_by": "metadata"}, "sort_by"),
            ("list_knowledge", {"limit": 0}, "limit"),
            ("get_knowledge", {}, "id"),
        ],
    )
    def test_storage_knowledge_bad_input_names_the_field(
        self, storage: StorageUnderTest, method: str, inputs: dict[str, object], field: str
    ) -> None:
        with pytest.raises(InvalidInputError) as raised:
            storage.call(method, inputs)
        assert field in str(raised.value.details.get("field", "")) + str(raised.value)
