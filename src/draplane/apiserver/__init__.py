"""The API server: registry (verbs over storage), watch cache, admission, and the HTTP layer."""
