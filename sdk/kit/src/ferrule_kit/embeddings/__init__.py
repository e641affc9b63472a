"""Embeddings and the vectors stored from them: the embedder and vector-store contracts.

- `ferrule_kit.embeddings.embedding` and `ferrule_kit.embeddings.embedspec`: the embedder
  contract (texts in, vectors out) and an embedder component type's description;
- `ferrule_kit.embeddings.vectors` and `ferrule_kit.embeddings.vectorspec`: the
  vector-store contract and a vector-store component type's description;
- `ferrule_kit.embeddings.vectorfilters`: the vector stores' metadata-filter language.
"""
