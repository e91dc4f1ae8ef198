# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""One cluster's Google Cloud: the Compute, IAM, Cloud DNS and Resource Manager REST APIs over google-auth.

Every GCE call of the collection goes through GceCloud's get / list / insert /
call / delete, so check mode is provable from a server's request log (only
insert, call and delete send POST, PATCH, PUT or DELETE).

Credentials are google-auth's: a service-account key file when one is given,
else Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's
application-default login, the metadata server).  KOPS_GCE_ENDPOINT (one base
URL serving every API under its real path prefix, e.g. tests/gce_server.py)
replaces Google's endpoints and then anonymous credentials are used.

Compute answers a mutation with an operation; it is waited on (zonal,
regional or global, by its selfLink, re-rooted on our endpoint) and its error
raised as a GceError.  429 and 5xx answers, and connections that fail, are
retried a few times with exponential back-off.

google-auth and requests are imported on first use only: module_utils must
import without them.
"""

from __future__ import annotations

import os
import re
import time

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.base import Cloud, Failure
from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError, unreachable

ENDPOINT_ENV = "KOPS_GCE_ENDPOINT"
# Each API's base URL; under KOPS_GCE_ENDPOINT the same path prefixes hang off that one base.
API_PREFIXES = {"compute": "compute/v1/", "iam": "v1/", "dns": "dns/v1/", "crm": "v1/"}
GOOGLE_HOSTS = {"compute": "https://compute.googleapis.com/", "iam": "https://iam.googleapis.com/",
                "dns": "https://dns.googleapis.com/", "crm": "https://cloudresourcemanager.googleapis.com/"}
SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
TIMEOUT = 60
# Seconds before each retry of a 429 / 5xx / failed connection (Google's guidance: exponential back-off).
RETRY_DELAYS = (0.5, 1.0, 2.0, 4.0)
RETRY_STATUSES = (429, 500, 502, 503, 504)
# Seconds before each poll of a pending operation; the last repeats until OPERATION_TIMEOUT.
POLL_DELAYS = (0.0, 0.2, 0.5, 1.0, 2.0)
OPERATION_TIMEOUT = 900
MUTATING = ("POST", "PATCH", "PUT", "DELETE")

NO_CREDENTIALS_HINT = ("set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file (or give credentials_file), "
                       "or run gcloud auth application-default login")
# reason -> what the user should do about it.
HINTS = {
    "noCredentials": NO_CREDENTIALS_HINT,
    "authError": "the Google credentials were refused: renew them (gcloud auth application-default login) "
                 "or check the service-account key file",
    "forbidden": "the credentials lack a permission, or the API is not enabled in the project "
                 "(gcloud services enable compute.googleapis.com iam.googleapis.com dns.googleapis.com)",
    "accessNotConfigured": "enable the API in the project (gcloud services enable compute.googleapis.com "
                           "iam.googleapis.com dns.googleapis.com cloudresourcemanager.googleapis.com)",
    "quotaExceeded": "raise the project's quota (console: IAM & Admin > Quotas) or make the cluster smaller",
    "rateLimitExceeded": "too many calls: try again later",
    "noProject": "set the cluster's spec.project (kops: --project), or a project in the credentials",
    "resourceInUseByAnotherResource": "something else still uses it; it is retried until the deadline",
    "resourceNotReady": "it is still changing; it is retried until the deadline",
    "conditionNotMet": "it changed meanwhile; run again",
    "timeout": "the operation did not finish in time; look at it in the console, then run again",
}
RETRYABLE_REASONS = ("resourceNotReady", "resourceInUseByAnotherResource")


class GceError(CloudError):
    """One failed Google API call: HTTP status, the API's reason ("notFound", "alreadyExists",
    "resourceNotReady" ...), its message, and the method and path called."""

    def __init__(self, status, reason, message, method="", path=""):
        self.status = status
        self.reason = reason or ""
        self.message = message or ""
        self.method = method
        self.path = path
        where = "%s %s: " % (method, path) if method else ""
        CloudError.__init__(self, "%s%s%s" % (where, "%s: " % self.reason if self.reason else "", self.message))


def gce_cluster_label(cluster_name):
    """kops' gce.SafeClusterName: the cluster name as a GCE label value ("." -> "-")."""
    return cluster_name.replace(".", "-")


def _camel(code):
    """An operation error's RESOURCE_IN_USE_BY_ANOTHER_RESOURCE as the REST reason resourceInUseByAnotherResource."""
    words = code.lower().split("_")
    return words[0] + "".join(w.capitalize() for w in words[1:])


HTML_TITLE = re.compile(r"<title>\s*([^<]{1,120}?)\s*</title>", re.IGNORECASE)


def _body_text(response):
    """An answer's body as an error says it: an HTML page (a proxy's, a load balancer's) as its title and where it
    came from, never the page; any other text, its first 200 characters."""
    text = response.text or ""
    start = text[:200].lstrip().lower()
    if "text/html" in str(response.headers.get("content-type", "")).lower() or start.startswith(("<!doctype html",
                                                                                                 "<html")):
        title = HTML_TITLE.search(text)
        host = "/".join(str(getattr(response, "url", "") or "").split("/")[:3])
        return ('HTTP %s with an HTML page%s from %s, not a Google API answer: the endpoint or a proxy before it '
                'failed; try again, or check the endpoint' % (response.status_code, ' ("%s")' % title.group(1)
                                                              if title else "", host or "the endpoint"))
    return text[:200]


def _error_of(response, method, path):
    """A non-2xx answer as a GceError (Google's shape: {"error": {code, message, status, errors: [{reason}]}})."""
    try:
        error = response.json().get("error") or {}
    except ValueError:
        error = {}
    if not isinstance(error, dict):  # OAuth endpoints answer {"error": "invalid_grant", ...}
        error = {"message": str(error)}
    details = error.get("errors") or [{}]
    reason = details[0].get("reason") or (_camel(error["status"]) if error.get("status") else "")
    message = error.get("message") or details[0].get("message") or _body_text(response) or response.reason
    if response.status_code == 401:
        reason = reason or "authError"
    return GceError(response.status_code, reason, message, method, path)


def _google():
    try:
        import google.auth
        import google.auth.exceptions
        import google.oauth2.service_account
        import requests
        from google.auth.credentials import AnonymousCredentials
        from google.auth.transport.requests import AuthorizedSession
    except ImportError:
        raise GceError(None, "missingLibrary", "GCE needs the Python libraries google-auth and requests "
                       "(pip install google-auth requests)")
    return google, requests, AnonymousCredentials, AuthorizedSession


def endpoints_for(base=None, endpoints=None):
    """{api: base URL}: Google's, or every API's prefix under one base (KOPS_GCE_ENDPOINT), or the given ones."""
    if base:
        base = base.rstrip("/") + "/"
        urls = {api: base + prefix for api, prefix in API_PREFIXES.items()}
    else:
        urls = {api: GOOGLE_HOSTS[api] + prefix for api, prefix in API_PREFIXES.items()}
    urls.update({api: url.rstrip("/") + "/" for api, url in (endpoints or {}).items()})
    return urls


def credentials(credentials_file=None):
    """(google-auth credentials, their project or None): the key file's, else Application Default Credentials."""
    google, _requests, _anonymous, _session = _google()
    if credentials_file:
        path = os.path.expanduser(credentials_file)
        try:
            creds = google.oauth2.service_account.Credentials.from_service_account_file(path, scopes=SCOPES)
        except (OSError, ValueError) as exc:
            raise GceError(None, "noCredentials", "service-account key file %s: %s; %s" % (path, exc, NO_CREDENTIALS_HINT))
        return creds, creds.project_id
    try:
        return google.auth.default(scopes=SCOPES)
    except google.auth.exceptions.DefaultCredentialsError as exc:
        raise GceError(None, "noCredentials", "no Google credentials found (%s): %s"
                       % (str(exc).split(". ", maxsplit=1)[0], NO_CREDENTIALS_HINT))


class GceCloud(Cloud):
    """The GCE side of one cluster: the REST APIs, its project, region and zones, ownership by kops' label."""

    provider = "gce"

    def __init__(self, cluster_name, project, region, credentials_file=None, endpoints=None, session=None):
        Cloud.__init__(self, cluster_name, region)
        override = os.environ.get(ENDPOINT_ENV)
        self.endpoints = endpoints_for(override, None if override else endpoints)
        self.anonymous = bool(override) or all(url.startswith("http://") for url in self.endpoints.values())
        self.credentials_file = credentials_file
        self._session = session
        self.project = project
        if not self.project and not self.anonymous and self._session is None:  # the credentials' own project
            self._session, self.project = self._make_session()
        if not self.project:
            raise GceError(None, "noProject", "no GCE project for cluster %s" % cluster_name)
        self.sleep = time.sleep
        self.clock = time.monotonic

    # -- identity ------------------------------------------------------------------------------------
    def ownership_tags(self):
        return {"k8s-io-cluster-name": gce_cluster_label(self.cluster_name)}

    @property
    def zones(self):
        """The region's zone names, looked up once (GET projects/{p}/regions/{region})."""
        def fetch():
            region = self.get("compute", "projects/%s/regions/%s" % (self.project, self.region))
            if region is None:
                raise GceError(404, "notFound", "region %s does not exist in project %s" % (self.region, self.project))
            return sorted(url.rsplit("/", 1)[-1] for url in region.get("zones") or [])
        return self.lookup(("zones", self.region), fetch)

    # -- transport -----------------------------------------------------------------------------------
    def _make_session(self):
        _google_mod, _requests, anonymous, authorized_session = _google()
        if self.anonymous:
            return authorized_session(anonymous()), None
        creds, project = credentials(self.credentials_file)
        return authorized_session(creds), project

    @property
    def session(self):
        if self._session is None:
            self._session = self._make_session()[0]
        return self._session

    def url(self, api, path):
        if path.startswith(("http://", "https://")):
            return self.relink(api, path)
        if api not in self.endpoints:
            raise GceError(None, "invalid", "unknown Google API %r (one of %s)" % (api, ", ".join(sorted(self.endpoints))))
        return self.endpoints[api] + path.lstrip("/")

    def relink(self, api, link):
        """A selfLink / targetLink re-rooted on this cloud's endpoint for api (Google's links name Google's host)."""
        prefix = API_PREFIXES[api]
        marker = "/" + prefix
        if marker in link:
            return self.endpoints[api] + link.split(marker, 1)[1]
        return link

    def _request(self, method, url, path, body=None, params=None):
        """One HTTP call, retried on 429 / 5xx / connection errors; the decoded answer or a GceError."""
        google, requests = _google()[:2]
        attempt = 0
        while True:
            try:
                response = self.session.request(method, url, json=body, params=params, timeout=TIMEOUT)
            except google.auth.exceptions.GoogleAuthError as exc:
                raise GceError(401, "authError", "getting a Google access token: %s" % exc, method, path)
            except requests.RequestException as exc:
                if attempt < len(RETRY_DELAYS):
                    self.sleep(RETRY_DELAYS[attempt])
                    attempt += 1
                    continue
                raise GceError(None, "connectionError", "%s (after %d tries)" % (unreachable(exc), attempt + 1),
                               method, path)
            if response.status_code in RETRY_STATUSES and attempt < len(RETRY_DELAYS):
                self.sleep(_retry_after(response, RETRY_DELAYS[attempt]))
                attempt += 1
                continue
            if response.status_code >= 400:
                error = _error_of(response, method, path)
                error.attempts = attempt + 1
                raise error
            if not response.content:
                return {}
            try:
                return response.json()
            except ValueError:
                raise GceError(response.status_code, "badResponse", "not JSON: %s" % _body_text(response), method, path)

    # -- the API surface -----------------------------------------------------------------------------
    def get(self, api, path, params=None):
        """The resource at path, or None if it does not exist (404)."""
        try:
            return self._request("GET", self.url(api, path), path, params=params)
        except GceError as exc:
            if exc.status == 404:
                return None
            raise

    def list(self, api, path, params=None, key="items"):
        """Every item of a list call, following nextPageToken; an aggregated list's scopes are flattened."""
        params = dict(params or {})
        items = []
        while True:
            page = self._request("GET", self.url(api, path), path, params=params)
            found = page.get(key) or []
            if isinstance(found, dict):  # aggregatedList: {"zones/z": {"instances": [...]} or {"warning": ...}}
                for scoped in found.values():
                    for name, value in scoped.items():
                        if name != "warning":
                            items.extend(value)
            else:
                items.extend(found)
            token = page.get("nextPageToken")
            if not token:
                return items
            params["pageToken"] = token

    def insert(self, api, path, body):
        """POST body to the collection at path, wait for it, and return the new resource as the API reads it."""
        try:
            answer = self.call(api, "POST", path, body)
        except GceError as exc:
            # A create whose first try landed but whose answer was lost (a 5xx, a dropped connection)
            # meets itself on the retry: the resource is there.
            if exc.reason == "alreadyExists" and getattr(exc, "attempts", 1) > 1 and body.get("name"):
                found = self.get(api, "%s/%s" % (path.rstrip("/"), body["name"]))
                if found is not None:
                    return found
            raise
        if not _is_operation(answer):
            return answer
        link = answer.get("targetLink")
        target = self.relink(api, link) if link else "%s/%s" % (path.rstrip("/"), body.get("name"))
        created = self.get(api, target)
        if created is None:
            raise GceError(404, "notFound", "created but not found afterwards: %s" % target, "GET", target)
        return created

    def call(self, api, method, path, body=None, params=None, wait=True):
        """Any call; a Compute operation (or a pending Cloud DNS change) is waited on unless wait=False."""
        answer = self._request(method, self.url(api, path), path, body=body, params=params)
        if wait and _is_operation(answer):
            return self.wait(answer, api)
        if wait and answer.get("kind") == "dns#change" and answer.get("status") == "pending":
            return self._wait_dns_change(answer, path)
        return answer

    def delete(self, api, path):
        """Delete path and wait; False if it was already gone."""
        try:
            self.call(api, "DELETE", path)
        except GceError as exc:
            if exc.status == 404 or exc.reason in ("notFound", "resourceNotFound"):
                return False
            raise
        return True

    def operation_link(self, operation, api="compute"):
        """Where to poll an operation: its selfLink on our endpoint, else its zone's, region's or the global
        operations collection (an emulator may leave selfLink out)."""
        if operation.get("selfLink"):
            return self.relink(api, operation["selfLink"])
        for scope in ("zone", "region"):
            if operation.get(scope):
                where = "%ss/%s" % (scope, operation[scope].rstrip("/").rsplit("/", 1)[-1])
                break
        else:
            where = "global"
        return self.url(api, "projects/%s/%s/operations/%s" % (self.project, where, operation["name"]))

    def wait(self, operation, api="compute"):
        """Poll a Compute operation (zonal, regional or global) until DONE; its error as GceError."""
        link = self.operation_link(operation, api)
        deadline = self.clock() + OPERATION_TIMEOUT
        polls = 0
        while operation.get("status") != "DONE":
            if self.clock() > deadline:
                raise GceError(None, "timeout", "operation %s (%s %s) still %s after %d s" % (
                    operation.get("name"), operation.get("operationType"), operation.get("targetLink"),
                    operation.get("status"), OPERATION_TIMEOUT), "GET", link)
            self.sleep(POLL_DELAYS[min(polls, len(POLL_DELAYS) - 1)])
            polls += 1
            operation = self._request("GET", link, link)
        errors = (operation.get("error") or {}).get("errors") or []
        if errors:
            first = errors[0]
            message = "; ".join(e.get("message") or e.get("code", "") for e in errors)
            target = operation.get("targetLink") or ""
            raise GceError(operation.get("httpErrorStatusCode"), _camel(first.get("code") or "unknown"), message,
                           operation.get("operationType", ""), target.split("/" + API_PREFIXES[api], 1)[-1])
        return operation

    def _wait_dns_change(self, change, path):
        zone_path = path.split("/changes", 1)[0].split("/rrsets", 1)[0]
        link = "%s/changes/%s" % (zone_path, change["id"])
        deadline = self.clock() + OPERATION_TIMEOUT
        polls = 0
        while change.get("status") != "done":
            if self.clock() > deadline:
                raise GceError(None, "timeout", "Cloud DNS change %s still %s" % (change.get("id"), change.get("status")),
                               "GET", link)
            self.sleep(POLL_DELAYS[min(polls, len(POLL_DELAYS) - 1)])
            polls += 1
            change = self._request("GET", self.url("dns", link), link)
        return change

    # -- errors --------------------------------------------------------------------------------------
    def retryable(self, exc):
        if Cloud.retryable(self, exc):
            return True
        return isinstance(exc, GceError) and exc.reason in RETRYABLE_REASONS

    def failure(self, exc):
        if not isinstance(exc, GceError):
            return Cloud.failure(self, exc)
        hint = HINTS.get(exc.reason) or {401: HINTS["authError"], 403: HINTS["forbidden"]}.get(exc.status, "")
        if hint and hint in exc.message:  # said already (errors raised before any call carry their hint)
            hint = ""
        where = "%s %s: " % (exc.method, exc.path) if exc.method else ""
        return Failure(exc.reason, "%s%s" % (where, exc.message), hint)


def _is_operation(answer):
    return isinstance(answer, dict) and answer.get("kind", "") == "compute#operation"


def _retry_after(response, default):
    try:
        return min(float(response.headers.get("Retry-After")), 30.0)
    except (TypeError, ValueError):
        return default
