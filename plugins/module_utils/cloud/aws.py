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
