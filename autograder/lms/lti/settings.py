"""The course's registration with an LTI 1.3 platform: ``lti.toml`` in the course folder.

::

    [platform]
    issuer = "https://canvas.instructure.com"          # the "iss" of its launches
    client_id = "10000000000042"                       # the developer key's id
    deployment_id = "7:8865aa05b4b79b64a91a86042e43af5ea8ae79eb"
    token_url = "https://school.instructure.com/login/oauth2/token"
    jwks_url = "https://school.instructure.com/api/lti/security/jwks"
    auth_login_url = "https://school.instructure.com/api/lti/authorize_redirect"
    lineitems_url = "https://school.instructure.com/api/lti/courses/101/line_items"
    memberships_url = "https://school.instructure.com/api/lti/courses/101/names_and_roles"

    [tool]
    private_key = "lti-private-key.pem"    # made once by `lti keys`; relative to the course

The two service URLs are the course's (a launch carries them too, in its AGS and NRPS
claims). Every URL must be ``https``, except on this machine's loopback (a test platform).
A file with a missing, unknown or malformed key is refused whole, with the key named.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ...course import Course

SETTINGS_FILE = "lti.toml"
PLATFORM_KEYS = ("issuer", "client_id", "deployment_id", "token_url", "jwks_url",
                 "auth_login_url", "lineitems_url", "memberships_url")
URL_KEYS = tuple(key for key in PLATFORM_KEYS if key.endswith("_url")) + ("issuer",)
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class LtiSettingsError(ValueError):
    """``lti.toml`` cannot be used: refused whole, with the key named."""


@dataclass(frozen=True)
class LtiSettings:
    issuer: str
    client_id: str
    deployment_id: str
    token_url: str
    jwks_url: str
    auth_login_url: str
    lineitems_url: str
    memberships_url: str
    private_key: Path          # the tool's private key (PEM), absolute


def _url(value: str, where: str) -> str:
    parts = urlsplit(value)
    secure = parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK)
    if not parts.hostname or not secure:
        raise LtiSettingsError(f"{where}: {value!r} is not an https URL (http only on "
                               f"loopback)")
    return value


def parse(text: str, course_root: Path, origin: str = SETTINGS_FILE) -> LtiSettings:
    """The settings in ``text`` (the contents of ``origin``); :class:`LtiSettingsError`."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise LtiSettingsError(f"{origin}: not TOML: {error}") from None
    unknown = sorted(set(data) - {"platform", "tool"})
    if unknown:
        raise LtiSettingsError(f"{origin}: unknown table [{unknown[0]}]")
    platform, tool = data.get("platform", {}), data.get("tool", {})
    for table, name, known in ((platform, "platform", PLATFORM_KEYS),
                               (tool, "tool", ("private_key",))):
        if not isinstance(table, dict):
            raise LtiSettingsError(f"{origin}: [{name}] must be a table")
        for key in sorted(set(table) - set(known)):
            raise LtiSettingsError(f"{origin}: [{name}] {key}: unknown key")
        for key in known:
            value = table.get(key)
            if not isinstance(value, str) or not value.strip():
                raise LtiSettingsError(f"{origin}: [{name}] {key}: missing or not a text")
    for key in URL_KEYS:
        _url(platform[key], f"{origin}: [platform] {key}")
    key_path = Path(tool["private_key"])
    return LtiSettings(**{key: platform[key] for key in PLATFORM_KEYS},
                       private_key=key_path if key_path.is_absolute()
                       else course_root / key_path)


def load(course: Course) -> LtiSettings | None:
    """The course's settings; None where it has no ``lti.toml``."""
    path = course.root / SETTINGS_FILE
    if not path.exists():
        return None
    return parse(path.read_text(encoding="utf-8"), course.root)
