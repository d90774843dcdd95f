"""The in-memory Kubernetes API: store, REST semantics, admission, eviction, watch and the HTTP facade."""
