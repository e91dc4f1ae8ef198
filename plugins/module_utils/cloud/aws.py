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

    def single_attempt_client(self, service):
        """A client whose calls are sent once (botocore does not retry them): for create_once."""
        key = service + "/single-attempt"
        with self._lock:
            if key not in self._clients:
                # botocore's max_attempts counts the retries after the first try: 0 is "send once".
                self._clients[key] = session(self.region, self.profile).client(
                    service, config=client_config(max_attempts=0))
            return self._clients[key]

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


# -- creating an object once ---------------------------------------------------------------------------
# EC2 cannot deduplicate most creates (CreateVpc, AllocateAddress, CreateInternetGateway, CreateDhcpOptions,
# CreateSecurityGroup... take no ClientToken), and botocore's own retry of a 5xx re-sends the create: a
# response lost on the way back leaves two objects.  So a create is sent by a client that never retries,
# carries a unique token tag (and ClientToken where the API has one), and after an ambiguous failure the
# object is looked up by that tag before the create is sent again.
CREATE_TOKEN_TAG = "kubeops.kops/create-token"
THROTTLING_CODES = frozenset(("Throttling", "ThrottlingException", "RequestLimitExceeded", "RequestThrottled",
                              "TooManyRequestsException", "SlowDown"))
CREATE_ATTEMPTS = 5


def ambiguous(exc):
    """Whether a failed call may still have landed: a 5xx answer, a dropped connection, a timeout."""
    import botocore.exceptions
    if isinstance(exc, (botocore.exceptions.ConnectionError, botocore.exceptions.HTTPClientError)):
        return True
    status = ((getattr(exc, "response", None) or {}).get("ResponseMetadata") or {}).get("HTTPStatusCode")
    return isinstance(status, int) and status >= 500


def create_once(cloud, operation, id_of, find_by_token, tag_specification=None, service="ec2", sleep=None, **kwargs):
    """Send a create at most once per object: (object id, the create's response or None if it was found).

    operation: the client method (e.g. "create_vpc"); id_of(response): the new object's id.
    find_by_token(tag_key, token): the id of the object carrying that tag, or None (a read, retried by botocore).
    tag_specification: (EC2 resource type, tags) sent as TagSpecifications with the token tag added.
    A throttled call is sent again after a pause; an ambiguous failure (see ambiguous) first looks the
    object up by its token (twice, a pause apart: describes are eventually consistent) and sends the
    create again only if it is not there.
    """
    import time
    import uuid
    sleep = sleep or time.sleep
    token = uuid.uuid4().hex
    if tag_specification:
        resource_type, tags = tag_specification
        kwargs["TagSpecifications"] = [{"ResourceType": resource_type,
                                        "Tags": tag_list(dict(tags, **{CREATE_TOKEN_TAG: token}))}]
    api = cloud.single_attempt_client(service)
    operation_name = api.meta.method_to_api_mapping[operation]
    if "ClientToken" in api.meta.service_model.operation_model(operation_name).input_shape.members:
        kwargs["ClientToken"] = token
    object_id, response = _send_once(api, operation, id_of, lambda: find_by_token(CREATE_TOKEN_TAG, token), sleep,
                                     kwargs)
    if tag_specification:
        # The token has done its work: the object is found by its Name tag from now on, and carries
        # the same tags as one made by Terraform or CloudFormation.
        cloud.client(service).delete_tags(Resources=[object_id], Tags=[{"Key": CREATE_TOKEN_TAG}])
    return object_id, response


def _send_once(api, operation, id_of, find, sleep, kwargs):
    delay = 1.0
    for attempt in range(1, CREATE_ATTEMPTS + 1):
        try:
            response = getattr(api, operation)(**kwargs)
            return id_of(response), response
        except Exception as exc:  # pylint: disable=broad-except
            if ambiguous(exc):
                for lookup in range(2):
                    found = find()
                    if found is not None:
                        return found, None
                    if lookup == 0:
                        sleep(delay)
            elif error_code(exc) not in THROTTLING_CODES:
                raise
            if attempt == CREATE_ATTEMPTS:
                raise
            sleep(delay)
            delay = min(delay * 2, 10.0)
    raise AssertionError("unreachable")
