"""ferrule-faiss: the `faiss_store` component, ferrule's vector-store contract on FAISS."""
