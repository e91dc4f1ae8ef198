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

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.base import Cloud, Failure

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


# Error codes that mean "not yet" on AWS (eventual consistency, kops' TryAgainLater): an object just
# created is not visible to another API for a few seconds, a dependency is still going away.
RETRYABLE_CODES = frozenset((
    "InvalidGroup.NotFound", "InvalidSubnetID.NotFound", "InvalidRouteTableID.NotFound", "InvalidVpcID.NotFound",
    "InvalidAllocationID.NotFound", "InvalidInternetGatewayID.NotFound", "InvalidNatGatewayID.NotFound",
    "InvalidNetworkInterfaceID.NotFound", "InvalidLaunchTemplateId.NotFound", "InvalidLaunchTemplateName.NotFoundException",
    "NoSuchEntity", "DependencyViolation", "IncorrectState", "ResourceInUse", "ResourceContention",
    "ScalingActivityInProgress", "OperationAborted",
))
# Messages that mean "not yet" under a generic code: a fresh instance profile is not usable at once.
RETRYABLE_MESSAGES = ("Invalid IAM Instance Profile", "Invalid IamInstanceProfile", "not authorized to perform: iam:PassRole")
# What to do, per error code, in the failure line.
HINTS = {
    "UnauthorizedOperation": "the credentials in use lack this permission; grant it or use another profile",
    "AccessDenied": "the credentials in use lack this permission; grant it or use another profile",
    "AccessDeniedException": "the credentials in use lack this permission; grant it or use another profile",
    "AuthFailure": "the credentials are not valid; check access_key/secret_key or the profile",
    "ExpiredToken": "the session token has expired; refresh the credentials",
    "VpcLimitExceeded": "the account's VPC quota is used up; raise it or delete unused VPCs",
    "AddressLimitExceeded": "the account's Elastic IP quota is used up; raise it or release unused addresses",
    "LimitExceeded": "an account quota is used up; raise it in Service Quotas",
    "InvalidParameterValue": "the spec asks for a value AWS refuses; fix the field named in the message",
    "InvalidAMIID.NotFound": "the image does not exist in this region; fix spec.image of the instance group",
    "InsufficientInstanceCapacity": "AWS has no capacity for this machine type here; pick another type or zone",
    "DependencyViolation": "something outside the cluster still uses it; remove that first",
}


def error_code(exc):
    return ((getattr(exc, "response", None) or {}).get("Error") or {}).get("Code")


class AwsCloud(Cloud):
    """The AWS side of one cluster's reconcile: clients, ownership, and each kind's lookup done once.

    Lookups are cached per kind (one paginated describe per kind, filtered by
    the cluster tag) and shared by the engine's worker threads.
    """

    provider = "aws"

    def __init__(self, cluster_name, region, profile=None):
        Cloud.__init__(self, cluster_name, region)
        self.profile = profile
        self._clients = {}

    def client(self, service):
        with self._lock:
            if service not in self._clients:
                self._clients[service] = client(service, region=self.region, profile=self.profile)
            return self._clients[service]

    @property
    def ec2(self):
        return self.client("ec2")

    def ownership_tags(self):
        return {"KubernetesCluster": self.cluster_name, "kubernetes.io/cluster/%s" % self.cluster_name: "owned"}

    def cluster_filter(self):
        return [{"Name": "tag:KubernetesCluster", "Values": [self.cluster_name]}]

    def retryable(self, exc):
        if Cloud.retryable(self, exc):
            return True
        code = error_code(exc)
        message = str(((getattr(exc, "response", None) or {}).get("Error") or {}).get("Message") or "")
        return code in RETRYABLE_CODES or any(text in message for text in RETRYABLE_MESSAGES)

    def failure(self, exc):
        code = error_code(exc)
        if code is None:
            return Cloud.failure(self, exc)
        message = ((exc.response.get("Error") or {}).get("Message") or str(exc)).strip()
        operation = getattr(exc, "operation_name", "")
        return Failure(code, "%s%s" % ("%s: " % operation if operation else "", message), HINTS.get(code, ""))


def tag_list(tags):
    return [{"Key": k, "Value": v} for k, v in sorted(tags.items())]


def tag_dict(tag_items):
    return {t["Key"]: t["Value"] for t in tag_items or []}
