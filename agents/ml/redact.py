"""Removing secrets (tokens, keys, passwords) from text before it leaves the process."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["REDACTED", "redact"]

REDACTED: Final = "[REDACTED]"
_PATTERNS: Final = (
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.DOTALL),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b"),  # OpenAI-style keys
    re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"),  # Hugging Face tokens
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),  # GitHub tokens
    re.compile(r"\bxox[abpr]-[A-Za-z0-9-]{10,}\b"),  # Slack tokens
    re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b"),  # JWT
    re.compile(r"(?i)\bBearer\s+[A-Za-z0-9._~+/=-]{8,}"),
)
# key=value / key: value where the key names a secret: keep the key, drop the value
_KEYED: Final = re.compile(
    r"(?i)\b([\w.-]*(?:api[_-]?key|access[_-]?key|secret|token|passwd|password|pwd|credentials?|auth)[\w.-]*)"
    r"(\s*[=:]\s*|\s+)(['\"]?)([^\s'\",;]{4,})\3"
)
_URL_CREDS: Final = re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@")


def redact(text: str) -> str:
    """``text`` with secrets replaced by ``[REDACTED]``."""
    out = _URL_CREDS.sub(rf"\1{REDACTED}@", text)
    for rx in _PATTERNS:
        out = rx.sub(REDACTED, out)
    return _KEYED.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}{REDACTED}{m.group(3)}", out)
