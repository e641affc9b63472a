"""ferrule-chroma: the `chroma_vector_store` component, ferrule's vector-store contract on a
Chroma server."""
