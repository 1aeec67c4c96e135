"""The service-account signing key: one PEM private key in the data dir (`DIR/sa.key`, 0600).

`load_or_create` generates the key on first start (RS256 with a 2048-bit RSA key by default, as
kubeadm's `sa.key`, or ES256 on P-256) under a file lock and loads it on later starts, so several
API servers sharing a data dir sign and verify alike. The key id is kube-apiserver's
`keyIDFromPublicKey`: the unpadded base64url SHA-256 of the public key's DER
(SubjectPublicKeyInfo) encoding.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

KEY_FILE = "sa.key"

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
PublicKey = ec.EllipticCurvePublicKey | rsa.RSAPublicKey

# Curve name -> JWS algorithm, as kube-apiserver's signerFromECDSAPrivateKey chooses.
_EC_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
GENERATED_ALGORITHMS = ("ES256", "RS256")


@dataclass(frozen=True)
class VerificationKey:
    """A public key that service-account tokens may be signed with, under its key id."""

    kid: str
    algorithm: str
    public_key: PublicKey


@dataclass(frozen=True)
class SigningKey:
    kid: str
    algorithm: str
    private_key: PrivateKey

    def verification_key(self) -> VerificationKey:
        return VerificationKey(self.kid, self.algorithm, self.private_key.public_key())


def key_id(public_key: PublicKey) -> str:
    der = public_key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()


def signing_key(private_key: PrivateKey) -> SigningKey:
    """The signing key for a private key: RS256 for RSA, ES256/384/512 by the EC curve."""
    if isinstance(private_key, rsa.RSAPrivateKey):
        algorithm = "RS256"
    else:
        curve = private_key.curve.name
        if curve not in _EC_ALGORITHMS:
            raise ValueError(f"unknown private key curve {curve}, must be 256, 384, or 521")
        algorithm = _EC_ALGORITHMS[curve]
    return SigningKey(key_id(private_key.public_key()), algorithm, private_key)


def _check_algorithm(algorithm: str) -> None:
    if algorithm not in GENERATED_ALGORITHMS:
        raise ValueError(f"unsupported algorithm {algorithm!r}: must be one of ES256, RS256")


def generate(algorithm: str = "RS256") -> SigningKey:
    """A new key: ES256 on P-256, or RS256 with a 2048-bit RSA key."""
    _check_algorithm(algorithm)
    if algorithm == "ES256":
        return signing_key(ec.generate_private_key(ec.SECP256R1()))
    return signing_key(rsa.generate_private_key(public_exponent=65537, key_size=2048))


def to_pem(key: SigningKey) -> bytes:
    return key.private_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def load(path: Path) -> SigningKey:
    """The signing key in a PEM file; ValueError when it holds no usable private key."""
    try:
        private_key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{path}: not an unencrypted PEM private key: {err}") from err
    if not isinstance(private_key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
        raise ValueError(f"{path}: unsupported private key type {type(private_key).__name__}")
    return signing_key(private_key)


def key_file(data_dir: Path) -> Path:
    return data_dir / KEY_FILE


@contextlib.contextmanager
def _locked(data_dir: Path) -> Iterator[None]:
    fd = os.open(data_dir / (KEY_FILE + ".lock"), os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def load_or_create(data_dir: Path, algorithm: str = "RS256") -> SigningKey:
    """The data dir's signing key, generated with `algorithm` if the dir has none yet.

    RS256 is the default because tokens are verified on every request and signed rarely: an
    RS256 signature verifies in about half the time of an ES256 one (docs/dependencies.md).

    An existing key is used whatever its algorithm. The new file is written to a temporary name
    with mode 0600, synced and renamed, so no reader ever sees a partial key.
    """
    _check_algorithm(algorithm)
    data_dir.mkdir(parents=True, exist_ok=True)
    path = key_file(data_dir)
    with _locked(data_dir):
        if path.exists():
            return load(path)
        key = generate(algorithm)
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o600)  # also when a stale temporary file had other bits
            f.write(to_pem(key))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        return key
