# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""One place that makes boto3 clients.

Retries are botocore's own (standard mode by default, AWS_RETRY_MODE=adaptive
to change it), pagination is botocore's paginators, and endpoints, profiles
and regions resolve like the AWS CLI (AWS_ENDPOINT_URL[_<SERVICE>],
AWS_PROFILE, AWS_REGION / AWS_DEFAULT_REGION).
"""

from __future__ import annotations

import os

USER_AGENT = "kubeops.kops"


class AwsError(ValueError):
    """An AWS call failed; the message names the call and what to check."""


def _boto3():
    try:
        import boto3
        import botocore.config
    except ImportError:
        raise AwsError("boto3 is required for AWS (pip install boto3)")
    return boto3, botocore.config


def session(region=None, profile=None):
    boto3 = _boto3()[0]
    return boto3.session.Session(region_name=region or None, profile_name=profile or None)


def client_config(max_attempts=10):
    config = _boto3()[1]
    return config.Config(
        retries={"mode": os.environ.get("AWS_RETRY_MODE", "standard"), "max_attempts": max_attempts},
        user_agent_extra=USER_AGENT,
    )


def client(service, region=None, profile=None, endpoint_url=None):
    return session(region, profile).client(service, config=client_config(), endpoint_url=endpoint_url or None)


def paginate(api_client, operation, result_key, **kwargs):
    """Every item of a paginated operation's result_key list."""
    items = []
    for page in api_client.get_paginator(operation).paginate(**kwargs):
        items.extend(page.get(result_key) or [])
    return items


def describe_error(exc, what):
    """A short message for a botocore error while doing `what`."""
    response = getattr(exc, "response", None) or {}
    error = response.get("Error") or {}
    code = error.get("Code") or type(exc).__name__
    return AwsError("%s: %s: %s" % (what, code, error.get("Message") or exc))


class AwsCloud(object):
    """The AWS side of one cluster's reconcile: clients, and each kind's lookup done once.

    Lookups are cached per kind (one paginated describe per kind, filtered by
    the cluster tag) and shared by the engine's worker threads.
    """

    def __init__(self, cluster_name, region, profile=None):
        import threading
        self.cluster_name = cluster_name
        self.region = region
        self.profile = profile
        self._clients = {}
        self._cache = {}
        self._key_locks = {}
        self._lock = threading.Lock()

    def client(self, service):
        with self._lock:
            if service not in self._clients:
                self._clients[service] = client(service, region=self.region, profile=self.profile)
            return self._clients[service]

    @property
    def ec2(self):
        return self.client("ec2")

    def cluster_filter(self):
        return [{"Name": "tag:KubernetesCluster", "Values": [self.cluster_name]}]

    def lookup(self, key, fetch):
        """fetch() once per key (e.g. a kind), then the cached result.

        Tasks of one kind run side by side; a per-key lock makes the others
        wait for the first one's call instead of repeating it.
        """
        import threading
        with self._lock:
            if key in self._cache:
                return self._cache[key]
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                if key in self._cache:
                    return self._cache[key]
            value = fetch()
            with self._lock:
                self._cache[key] = value
            return value

    def forget(self, key):
        with self._lock:
            self._cache.pop(key, None)


def tag_list(tags):
    return [{"Key": k, "Value": v} for k, v in sorted(tags.items())]


def tag_dict(tag_items):
    return {t["Key"]: t["Value"] for t in tag_items or []}
