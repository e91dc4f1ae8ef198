# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A document that changes (a launch template's user data, a group's nodeup config) as the plan shows it: the
unified diff of its text, as kops' dry run shows a changed resource's text, with every secret it may hold masked.

What the documents can carry that must not reach a console or an AWX job log:
- private keys (PEM blocks "-----BEGIN ... PRIVATE KEY-----"), also inside a JSON or shell string, where the line
  breaks are "\\n";
- Kubernetes bootstrap tokens ([a-z0-9]{6}.[a-z0-9]{16}) and AWS access key ids (AKIA..., ASIA...);
- the value of any key or variable whose name says it is a secret: password, secret, token, credentials, API key,
  private or secret key, registry auth (the spec's fileAssets, hooks and containerd configAdditions are the user's
  text, additionalUserData parts the user's scripts; a kubelet or API server flag may name a token).
A masked value that changed still shows: its line is in the diff with both sides masked, and a note says that only
masked values differ when nothing else does.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import re

MASK = "<masked>"
PRIVATE_KEY = re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?-----END \1PRIVATE KEY-----", re.DOTALL)
TOKENS = (re.compile(r"\b[a-z0-9]{6}\.[a-z0-9]{16}\b"),  # a bootstrap token
          re.compile(r"\b(AKIA|ASIA)[A-Z0-9]{16}\b"))     # an AWS access key id
# A key (YAML, JSON, TOML, INI) or a variable (shell, environment) whose name ends in one of these (case and
# separators aside) holds a secret: its value is masked.
SECRET_NAME_ENDINGS = ("password", "passwd", "secret", "token", "credentials", "apikey", "privatekey", "secretkey",
                       "secretaccesskey", "dockerconfigjson")
SECRET_NAMES = ("auth",)  # exactly (a registry's auth), not anonymousAuth or authorizationMode
ASSIGNMENT = re.compile(r"""(?P<name>[A-Za-z_][\w.-]*)(?P<quote>["']?)(?P<sep>\s*[:=]\s*)"""
                        r"""(?P<value>"(?:[^"\\]|\\.)*"|'[^']*'|[^\s,;(){}\[\]"'\\]+)(?=[\s,;}\])\\]|$)""")
NOT_SECRET_VALUES = ("true", "false", "null", "none", '""', "''")
# Context lines around each change; a line longer than LONG_LINE is cut (the whole line at -vv).
CONTEXT = 3
LONG_LINE = 160
FULL_LINES = 2


def _secret_name(name):
    plain = re.sub(r"[^a-z0-9]", "", name.lower())
    return plain in SECRET_NAMES or plain.endswith(SECRET_NAME_ENDINGS)


def _mask_assignment(match):
    value = match.group("value")
    if not _secret_name(match.group("name")) or value.lower() in NOT_SECRET_VALUES or value.startswith(("/", "$")):
        return match.group(0)  # a file path or a shell expansion names where the secret is, not the secret
    quote = value[0] if value[0] in "\"'" else ""
    return "%s%s%s%s%s%s" % (match.group("name"), match.group("quote"), match.group("sep"), quote, MASK, quote)


def masked(text):
    """text with every secret it holds replaced by MASK."""
    text = PRIVATE_KEY.sub(lambda m: "-----BEGIN %sPRIVATE KEY----- %s -----END %sPRIVATE KEY-----"
                           % (m.group(1), MASK, m.group(1)), text)
    for pattern in TOKENS:
        text = pattern.sub(MASK, text)
    return ASSIGNMENT.sub(_mask_assignment, text)


def as_text(value):
    """The text a value holds when it is a document of several lines: itself, or what its base64 decodes to (user
    data travels base64-encoded); None for anything else (a short string, a number, a dict)."""
    if not isinstance(value, str):
        return None
    if "\n" in value:
        return value
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return decoded if "\n" in decoded else None


def diff(before, after, verbosity=0):
    """The unified diff (without the file headers) of two texts, secrets masked; None stands for no document."""
    old, new = masked(before or ""), masked(after or "")
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=CONTEXT))[2:]
    if not lines and (before or "") != (after or ""):
        return ["(only masked values differ)"]
    if verbosity >= FULL_LINES:
        return lines
    return [line if len(line) <= LONG_LINE else "%s... (%d characters)" % (line[:LONG_LINE], len(line))
            for line in lines]
