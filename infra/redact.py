"""Removing secrets (tokens, keys, passwords) from text before it leaves the process.

Used at the edge — the connectors redact log lines and submitted commands before publishing (on by
default, ``SCHEDMATE_REDACT=false`` turns it off) — and again by the worker on what it publishes
(failure evidence and explanations, the last error line, history rows) and sends to an LLM.

:func:`redact` works on one line. A private-key block spans lines: :class:`LineRedactor` keeps
that state across the lines of one stream.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from typing import Final

__all__ = ["REDACTED", "LineRedactor", "redact", "redact_args"]

REDACTED: Final = "[REDACTED]"
_PATTERNS: Final = (
    re.compile(r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----.*?(?:-----END [A-Z ]{0,40}PRIVATE KEY-----|$)", re.DOTALL),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"),  # OpenAI / Anthropic-style keys
    re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}\b"),  # Stripe secret / restricted keys
    re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"),  # Hugging Face tokens
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),  # GitHub tokens
    re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b"),  # GitLab tokens
    re.compile(r"\bxox[abpr]-[A-Za-z0-9-]{10,}\b"),  # Slack tokens
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),  # Google API keys
    re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b"),  # JWT
    re.compile(r"(?i)\b(?:Bearer|Basic|Digest)\s+[A-Za-z0-9._~+/=-]{8,}"),  # HTTP Authorization schemes
    re.compile(r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)=[^;\s'\"]{8,}"),  # Azure strings
    re.compile(r"(?i)(?<=[?&])(?:sig|X-Amz-Signature|X-Amz-Credential|X-Goog-Signature)=[^&\s'\"]{8,}"),  # signed URLs
)
# key=value / key: value where the key names a secret: keep the key, drop the value
_KEY: Final = (
    r"(?i)\b([\w.-]{0,40}(?:api[_-]?key|access[_-]?key|secret|token|passwd|password|pwd|credentials?|auth)[\w.-]{0,40})"
)
_VALUE: Final = r"(['\"]?)([^\s'\",;-][^\s'\",;]{3,})\3"  # not a following --flag
_KEYED: Final = re.compile(_KEY + r"(\s{0,4}[=:]\s{0,4}|\s{1,4})" + _VALUE)
_KEYED_ASSIGN: Final = re.compile(_KEY + r"(\s{0,4}[=:]\s{0,4})" + _VALUE)  # in commands: only key=value
_URL_CREDS: Final = re.compile(r"(\b[a-z][a-z0-9+.-]{0,20}://)[^/\s:@]{1,200}:[^/\s@]{1,200}@")
# `mysql -uroot -phunter2`, `sshpass -p hunter2`: a password glued to (or after) -p of a client that takes one
_DASH_P: Final = re.compile(r"(?i)(\b(?:mysql\w*|mariadb\w*|sshpass|mongo\w*|redis-cli)\b[^\n]{0,200}?\s-p\s?)(\S+)")
_BEGIN: Final = re.compile(r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----")
_END: Final = re.compile(r"-----END [A-Z ]{0,40}PRIVATE KEY-----")
_SECRET_FLAG: Final = re.compile(
    r"(?i)^--?[\w.-]{0,40}(?:api[_-]?key|access[_-]?key|secret|token|passwd|password|pwd|credentials?)[\w.-]{0,40}$"
)


def redact(text: str, spaced_keys: bool = True) -> str:
    """``text`` with secrets replaced by ``[REDACTED]``.

    ``spaced_keys``: also ``password hunter2`` (a secret-named word, then its value); for commands
    this is off — there a value follows its flag, see :func:`redact_args`.
    """
    out = _URL_CREDS.sub(rf"\1{REDACTED}@", text)
    for rx in _PATTERNS:
        out = rx.sub(REDACTED, out)
    out = _DASH_P.sub(lambda m: f"{m.group(1)}{REDACTED}", out)
    keyed = _KEYED if spaced_keys else _KEYED_ASSIGN
    return keyed.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}{REDACTED}{m.group(3)}", out)


def _redact_words(words: list[str]) -> list[str]:
    out: list[str] = []
    hide_next = False
    for w in words:
        out.append(REDACTED if hide_next and not w.startswith("-") else redact(w, spaced_keys=False))
        hide_next = bool(_SECRET_FLAG.match(w))
    return out


def redact_args(args: Iterable[str]) -> list[str]:
    """A command's words with secrets redacted, including the value after ``--password``-like flags.

    A word holding a whole command line (``["python train.py --token X"]``) is split into shell
    words, redacted the same way and joined back.
    """
    return [_redact_line(a) if any(c.isspace() for c in a) else a for a in _redact_words(list(args))]


def _redact_line(line: str) -> str:
    """A command line with its secret words replaced in place (quoting and ``&&`` kept)."""
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    pos = 0
    for word, red in zip(words, _redact_words(words), strict=True):
        at = line.find(word, pos)
        if word != red:
            if at < 0:  # a quoted word: fall back to re-quoting everything
                return shlex.join(_redact_words(words))
            line = line[:at] + red + line[at + len(word) :]
            at += len(red) - len(word)
        if at >= 0:
            pos = at + len(red)
    return line


class LineRedactor:
    """Redacts the lines of one stream, hiding every line of a private-key block (BEGIN … END)."""

    def __init__(self) -> None:
        self.in_key = False

    def line(self, text: str) -> str:
        """One line, redacted."""
        if self.in_key:
            if _END.search(text):
                self.in_key = False
                return REDACTED + _END.split(text, maxsplit=1)[-1]
            return REDACTED
        if _BEGIN.search(text) and not _END.search(text):
            self.in_key = True
        return redact(text)

    def lines(self, lines: Iterable[str]) -> list[str]:
        """Lines, redacted in order."""
        return [self.line(x) for x in lines]
