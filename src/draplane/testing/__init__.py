"""Test support: object builders and the fake clock. Imported only by tests."""
