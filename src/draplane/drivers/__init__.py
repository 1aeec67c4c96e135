"""DRA drivers built on `draplane.dra.controller`'s public API."""
