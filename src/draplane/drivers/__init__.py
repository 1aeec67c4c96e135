"""DRA drivers built on `draplane.driver`'s public API."""
