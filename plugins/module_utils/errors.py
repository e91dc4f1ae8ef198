# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The collection's one error base, KopsError, and one subclass per layer.

Every error the collection raises on purpose is a KopsError: bad input or a cloud's refusal, told in one line per
problem that names the field (or object) and, where one exists, the fix.  A module turns a KopsError into one
fail_json with that text and no traceback (module.py's reports_errors for KopsModule modules; ``reported`` here for
the others).  KopsError stays a ValueError: callers that catch ValueError (bad input in general) keep working.

Each layer's errors subclass that layer's class below, so a caller can catch one layer's errors
(``except errors.StateStoreError``) without knowing each module's own class.  This file imports only the standard
library: the node side (plugins/module_utils/nodeup/) raises these too.
"""

from __future__ import annotations

import functools
import re


class KopsError(ValueError):
    """Bad input or a refusal, said in one line per problem; ``fix`` is what to do about it, when known."""

    fix = None  # what to do, when the error knows it apart from its message (it is also in str(error))

    def __init__(self, message="", fix=None):
        if fix:
            self.fix = fix
        ValueError.__init__(self, "%s; %s" % (message, fix) if fix else message)

    def result(self):
        """What a module's fail_json reports: the message (with its fix) once, never a traceback."""
        return {"msg": str(self)}


class SpecError(KopsError):
    """api/ and completion/: a Cluster or InstanceGroup spec that is not valid, or cannot be completed."""


class StateStoreError(KopsError):
    """statestore/: the state store refused a read or a write."""


class ModelError(KopsError):
    """model/: a valid spec that cannot be turned into cloud tasks."""


class TaskError(KopsError):
    """tasks/ and engine/: a cloud task (or the plan of them) that failed or cannot run."""


class CloudError(KopsError):
    """cloud/, providers/, zones.py: a cloud's API refused or answered what cannot be used."""


class AddonError(KopsError):
    """addons/: an addon that cannot be rendered from this cluster's spec."""


class NodeConfigError(KopsError):
    """nodeconfig/: what a node gets (nodeup config, boot artifacts) cannot be decided."""


class NodeError(KopsError):
    """nodeup/ (runs on the node): the node's own configuration, etcd, volumes or DNS."""


class PkiError(KopsError):
    """pki/: keys and certificates."""


class KubeError(KopsError):
    """kube/: the Kubernetes API, its credentials and the channel of addons applied to it."""


class RollingError(KopsError):
    """rolling/: a rolling update that cannot be planned or stopped."""


class ServiceError(KopsError):
    """clusters.py, updates.py, upgrade.py, deletion/: a cluster operation as a whole."""


def reported(run):
    """Run a module's body (``run(module)``); any ValueError (a KopsError, or bad input a library refused) becomes
    the module's fail_json with its message once.  For modules that are not a KopsModule; it only calls
    module.fail_json, so a node module can use it without shipping the controller's module base."""
    @functools.wraps(run)
    def wrapper(module):
        try:
            return run(module)
        except ValueError as exc:
            module.fail_json(**(exc.result() if isinstance(exc, KopsError) else {"msg": str(exc)}))
    return wrapper


# The connection a urllib3 message names first ("HTTPSConnectionPool(host='h', port=443): "): the caller names the API.
_CONNECTION = re.compile(r"\w*Connection(Pool)?\(host='[^']*', port=\d+\): ")


def unreachable(exc):
    """Why an HTTP endpoint (a Kubernetes API, a Google API, a bucket) could not be reached, in a few words
    ("Connection refused", "certificate verify failed: ...", "Read timed out. (read timeout=30)"): the innermost
    cause of what urllib3 and requests wrap it in (their text repeats the address, the URL and "Max retries
    exceeded", and nests each cause's text in the next)."""
    cause, seen = exc, set()
    while id(cause) not in seen:
        seen.add(id(cause))
        inner = getattr(cause, "reason", None)
        if not isinstance(inner, BaseException):
            inner = next((arg for arg in cause.args if isinstance(arg, BaseException)), None) or cause.__cause__
        if inner is None:
            break
        cause = inner
    if getattr(cause, "verify_message", None):  # ssl.SSLCertVerificationError
        return "TLS: certificate verify failed: %s" % cause.verify_message
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror
    return _CONNECTION.sub("", str(cause)).strip() or type(cause).__name__
