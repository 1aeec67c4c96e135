"""`draplane record` and `draplane replay`: a recording of the DRA-relevant kinds, replayed
into a fresh in-process draplane."""
