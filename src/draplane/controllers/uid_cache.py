"""`UIDCache`: a bounded LRU set of object UIDs (the claim controller's deleted-pod memory)."""

from __future__ import annotations

from collections import OrderedDict


class UIDCache:
    """Remembers the most recent `max_size` UIDs; adding a known UID refreshes it."""

    def __init__(self, max_size: int) -> None:
        self._max_size = max_size
        self._uids: OrderedDict[str, None] = OrderedDict()

    def add(self, uid: str) -> None:
        self._uids[uid] = None
        self._uids.move_to_end(uid)
        while len(self._uids) > self._max_size:
            self._uids.popitem(last=False)

    def __contains__(self, uid: object) -> bool:
        return uid in self._uids

    def __len__(self) -> int:
        return len(self._uids)
