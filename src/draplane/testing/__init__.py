"""Test support: object builders and the fake clock. Imported only by tests.

`start_cluster()` and `start_http_server()` take `mode=` (`draplane.api.versions`); unlike the
commands, which default to 1.36, they default to classic DRA (1.28, `versions.CLASSIC`): most
tests exercise the classic flow, and every structured test passes `mode=versions.STRUCTURED`.
"""
