"""The tool's key pair: the private key signs the tool's requests for access tokens (a JWT
client assertion); the platform checks them with the public key set (JWKS), which it is
given at registration (pasted, or fetched from where the hub serves it).

The key is made once, 2048-bit RSA, and kept private (mode 0600) beside the course's
other secrets; its ``kid`` is its RFC 7638 thumbprint, so it never changes for one key.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwcrypto.jwk import JWK


def ensure_private_key(path: Path) -> str:
    """The PEM of the private key at ``path``, made (mode 0600) if there is none."""
    if not path.exists():
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(pem)
    return path.read_text()


def public_pem(private_pem: str) -> str:
    key = serialization.load_pem_private_key(private_pem.encode(), password=None)
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def public_jwk(private_pem: str) -> dict:
    """The public key as a JWK: RS256, for signatures, ``kid`` its thumbprint."""
    jwk = JWK.from_pem(public_pem(private_pem).encode())
    public = json.loads(jwk.export_public())
    public.update(alg="RS256", use="sig", kid=jwk.thumbprint())
    return public


def public_jwks(private_pem: str) -> dict:
    """The tool's public key set: ``{"keys": [jwk]}``."""
    return {"keys": [public_jwk(private_pem)]}
