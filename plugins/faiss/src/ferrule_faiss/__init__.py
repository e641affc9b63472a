"""ferrule-faiss: the `faiss_vector_store` component, ferrule's vector-store contract on FAISS."""
