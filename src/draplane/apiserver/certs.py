"""The cluster CA and the API server's serving certificate, generated into the data dir once.

Files: `ca.crt`/`ca.key` (self-signed CA) and `apiserver.crt`/`apiserver.key` (signed by the CA,
SANs 127.0.0.1, ::1 and localhost). Existing files are reused, so kubeconfigs stay valid across
restarts. EC P-256 keys keep first start fast; Go's TLS stack (kubectl) accepts them. Every
file is written atomically with mode 0600 into a 0700 data dir (`storage.files`).
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from draplane.storage import files

_VALIDITY = datetime.timedelta(days=3650)


@dataclass(frozen=True)
class CertPaths:
    ca_cert: Path
    ca_key: Path
    serving_cert: Path
    serving_key: Path

    def server_ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(self.serving_cert), str(self.serving_key))
        return ctx


def cert_paths(data_dir: Path) -> CertPaths:
    return CertPaths(
        ca_cert=data_dir / "ca.crt",
        ca_key=data_dir / "ca.key",
        serving_cert=data_dir / "apiserver.crt",
        serving_key=data_dir / "apiserver.key",
    )


def ensure_certs(data_dir: Path) -> CertPaths:
    """Create the CA and serving certificate unless both already exist."""
    paths = cert_paths(data_dir)
    files.private_dir(data_dir)
    if not (paths.ca_cert.exists() and paths.ca_key.exists()):
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_cert = _ca_certificate(ca_key)
        _write_key(paths.ca_key, ca_key)
        files.write_private(paths.ca_cert, ca_cert.public_bytes(serialization.Encoding.PEM))
        paths.serving_cert.unlink(missing_ok=True)
    if not (paths.serving_cert.exists() and paths.serving_key.exists()):
        ca_key_loaded = serialization.load_pem_private_key(paths.ca_key.read_bytes(), None)
        if not isinstance(ca_key_loaded, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{paths.ca_key}: expected an EC private key")
        ca_cert = x509.load_pem_x509_certificate(paths.ca_cert.read_bytes())
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _serving_certificate(key=key, ca_key=ca_key_loaded, ca_cert=ca_cert)
        _write_key(paths.serving_key, key)
        files.write_private(paths.serving_cert, cert.public_bytes(serialization.Encoding.PEM))
    return paths


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    files.write_private(path, pem)


def _now() -> datetime.datetime:
    # Backdated so that a client whose clock is slightly behind still accepts the cert.
    return datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=1)


def _ca_certificate(key: ec.EllipticCurvePrivateKey) -> x509.Certificate:
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "draplane-ca")])
    start = _now()
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )


def _serving_certificate(
    *,
    key: ec.EllipticCurvePrivateKey,
    ca_key: ec.EllipticCurvePrivateKey,
    ca_cert: x509.Certificate,
) -> x509.Certificate:
    start = _now()
    sans: list[x509.GeneralName] = [
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        x509.IPAddress(ipaddress.ip_address("::1")),
    ]
    return (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "draplane-apiserver")]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + _VALIDITY)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
