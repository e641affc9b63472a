"""ferrule-minilm: the `minilm_embedder` component, all-MiniLM-L6-v2 sentence embeddings on
numpy with its weights shipped in the wheel."""
