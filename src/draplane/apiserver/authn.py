"""Bearer-token authentication from a kube-apiserver static token file (`DIR/tokens`).

One line per user: `token,user,uid,"group1,group2"`. `ensure_user_token(s)` adds users under a
file lock and replaces the file atomically (0600, like its lock file and data dir: see
`storage.files`); `TokenAuthenticator` re-reads it whenever its
identity (inode, size, mtime) changes, so users added by other processes work at once. A known
token is answered from memory, the file's identity checked at most once per
`RECHECK_SECONDS`; an unknown one checks it at once.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import io
import os
import secrets
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from draplane.api import auth
from draplane.api.auth import UserInfo
from draplane.storage import files

TOKEN_FILE = "tokens"
RECHECK_SECONDS = 1.0
"""How long a known token is answered without looking at the file again."""

# The users written on first start, with their groups.
BOOTSTRAP_USERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (auth.ADMIN, (auth.SYSTEM_MASTERS,)),
    (auth.SCHEDULER, ()),
    (auth.CONTROLLER_MANAGER, ()),
    (auth.RESOURCE_CLAIM_CONTROLLER, auth.service_account_groups("kube-system")),
    (auth.driver_user("driver.example.com").name, auth.service_account_groups("kube-system")),
)


def default_groups(user: str) -> tuple[str, ...]:
    """The groups a user gets when none are given: admin is a master, nodes are nodes, service
    accounts are in `system:serviceaccounts` and `system:serviceaccounts:<namespace>`."""
    if user == auth.ADMIN:
        return (auth.SYSTEM_MASTERS,)
    if user.startswith(auth.NODE_PREFIX):
        return (auth.SYSTEM_NODES,)
    if user.startswith(auth.SERVICE_ACCOUNT_PREFIX) and user.count(":") == 3:
        return auth.service_account_groups(user.split(":")[2])
    return ()


def token_file(data_dir: Path) -> Path:
    return data_dir / TOKEN_FILE


def parse_token_file(text: str) -> dict[str, UserInfo]:
    """Token -> user; malformed lines (fewer than three fields) are skipped."""
    users: dict[str, UserInfo] = {}
    for row in csv.reader(io.StringIO(text)):
        if len(row) < 3 or not row[0].strip():
            continue
        groups = tuple(g for g in (row[3].split(",") if len(row) > 3 else []) if g)
        users[row[0].strip()] = UserInfo(row[1].strip(), row[2].strip(), groups)
    return users


def format_token_line(token: str, user: UserInfo) -> str:
    fields = (token, user.name, user.uid, *user.groups)
    if any("," in f or '"' in f or "\n" in f for f in fields):
        raise ValueError(f"token file fields may not contain commas or quotes: {user.name!r}")
    return f'{token},{user.name},{user.uid},"{",".join(user.groups)}"\n'


@contextlib.contextmanager
def _locked(data_dir: Path) -> Iterator[None]:
    files.private_dir(data_dir)
    lock_path = data_dir / (TOKEN_FILE + ".lock")
    files.create_private(lock_path)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def ensure_user_token(data_dir: Path, user: str, groups: tuple[str, ...] | None = None) -> str:
    """The token of `user`, adding a line to the token file when the user has none yet."""
    return ensure_user_tokens(data_dir, [(user, groups)])[user]


def ensure_user_tokens(
    data_dir: Path, users: Sequence[tuple[str, tuple[str, ...] | None]]
) -> dict[str, str]:
    """The token of each `(user, groups)`, adding a line for every user without one, in one
    read and at most one write of the token file (thousands of simulated nodes at once)."""
    path = token_file(data_dir)
    with _locked(data_dir):
        text = path.read_text() if path.exists() else ""
        tokens: dict[str, str] = {}
        for token, info in parse_token_file(text).items():
            tokens.setdefault(info.name, token)
        lines: list[str] = []
        for user, groups in users:
            if user in tokens:
                continue
            token = secrets.token_urlsafe(32)
            info = UserInfo(
                user, str(uuid.uuid4()), groups if groups is not None else default_groups(user)
            )
            # Formatted before the temporary file exists, so a rejected name leaves nothing
            # behind.
            lines.append(format_token_line(token, info))
            tokens[user] = token
        if lines:
            if text and not text.endswith("\n"):
                text += "\n"
            files.write_private(path, text + "".join(lines))
        return {user: tokens[user] for user, _groups in users}


def ensure_bootstrap_tokens(data_dir: Path) -> None:
    for user, groups in BOOTSTRAP_USERS:
        ensure_user_token(data_dir, user, groups)


class TokenAuthenticator:
    """Maps `Authorization: Bearer <token>` to a `UserInfo` from the static token file."""

    def __init__(self, path: Path, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._path = path
        self._monotonic = monotonic
        self._stamp: tuple[int, int, int] | None = None
        self._checked: float | None = None
        self._users: dict[str, UserInfo] = {}
        """Token -> its user, `system:authenticated` included."""

    def _reload(self) -> None:
        self._checked = self._monotonic()
        try:
            st = os.stat(self._path)
        except FileNotFoundError:
            self._stamp, self._users = None, {}
            return
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        if stamp != self._stamp:
            self._users = {
                token: _authenticated(user)
                for token, user in parse_token_file(self._path.read_text()).items()
            }
            self._stamp = stamp

    def authenticate(self, authorization: str | None) -> UserInfo | None:
        """The user for an Authorization header value, or None when it is not a known token."""
        if not authorization:
            return None
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return None
        if self._checked is None or self._monotonic() - self._checked >= RECHECK_SECONDS:
            self._reload()
        user = self._users.get(token)
        if user is None:
            # Perhaps a user added since the last look at the file.
            self._reload()
            user = self._users.get(token)
        return user


def _authenticated(user: UserInfo) -> UserInfo:
    if auth.SYSTEM_AUTHENTICATED in user.groups:
        return user
    return UserInfo(user.name, user.uid, (*user.groups, auth.SYSTEM_AUTHENTICATED))
