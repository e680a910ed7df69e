"""The semantic layer: embeddings cached by content hash, near-duplicates, hybrid search.

    backends   the full all-MiniLM-L6-v2 model and static embeddings distilled from it
    store      EmbeddingStore: vectors by (model_id, content_hash) in embeddings.db
    vectors    exact cosine in numpy blocks: neighbours, duplicate scans (incremental)
    search     SemanticSession, hybrid_search, similar_paths (the `similar:` query form)
    thresholds calibrated per backend (docs/semantic.md)

Importing this package loads no model: torch and model2vec load on first use.
"""
