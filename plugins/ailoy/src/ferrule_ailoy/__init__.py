"""ferrule-ailoy: Ailoy 0.1's raw component protocol, at the edge.

Ailoy 0.1's low-level ``Runtime`` names its components ``faiss_vector_store``,
``chromadb_vector_store``, ``tvm_embedding_model``, ``openai``, ``gemini``, ``claude`` and
``grok``, sends some inputs as bare JSON arrays and answers some requests with ``true`` or
``null``. This plugin is the one place that speaks it: each of those types is a component
built on ferrule's own (a store, the local embedder, a provider's language model), which it
defines and calls through the kernel's requests (`ferrule_kernel.ComponentRequests`). The
stores, embedders and providers know nothing of Ailoy. See `ferrule_ailoy.plugin`.
"""
