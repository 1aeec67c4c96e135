"""`draplane record` and `draplane replay`: every change of the DRA-relevant kinds of an API
server recorded with its time and resourceVersion, replayed into a fresh in-process draplane
(user-driven objects only; its scheduler and controllers do the rest) at real or compressed
time and with other scheduler settings, and two replays compared."""

from draplane.replay.compare import compare_json, render_table, write_compare_chart
from draplane.replay.player import play, user_driven
from draplane.replay.recording import Event, RecordingError, read_recording, record
from draplane.replay.run import ReplayResult, load_result, replay

__all__ = [
    "Event",
    "RecordingError",
    "ReplayResult",
    "compare_json",
    "load_result",
    "play",
    "read_recording",
    "record",
    "render_table",
    "replay",
    "user_driven",
    "write_compare_chart",
]
