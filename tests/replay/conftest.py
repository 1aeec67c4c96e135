"""The test planes of `tests.explain.conftest`."""

from tests.explain.conftest import plane

__all__ = ["plane"]
