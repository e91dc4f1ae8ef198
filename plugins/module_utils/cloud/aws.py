# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""One place that makes boto3 sessions and clients: every AWS call of the collection goes through client().

Credentials, profile, region and endpoint come from the module's AWS options
(configure(), called once per module run with the options of doc fragment
kubeops.kops.aws, named as amazon.aws names them), else resolve like the AWS
CLI (AWS_ACCESS_KEY_ID, AWS_PROFILE, AWS_ENDPOINT_URL[_<SERVICE>], shared
config files, instance role).  Retries are botocore's own (standard mode by
default, AWS_RETRY_MODE=adaptive to change it); pagination is botocore's
paginators.  Every client has connect and read timeouts
(KOPS_AWS_CONNECT_TIMEOUT, KOPS_AWS_READ_TIMEOUT, in seconds), and an endpoint
that does not connect or does not answer is given up after TIMEOUT_ATTEMPTS
tries, instead of botocore's ten with back-off (an endpoint that accepts TCP
and never answers kept a run busy 692 s): with the defaults, 3 x 20 s and the back-off, 63 s, announced after
10 s (module_utils/waits.py).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError

import copy
import os
import re
import threading

from ansible.module_utils.basic import env_fallback

from ansible_collections.kubeops.kops.plugins.module_utils import aws_models, waits
from ansible_collections.kubeops.kops.plugins.module_utils.cloud.base import Cloud, Failure
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import lookalike_cluster_names

USER_AGENT = "kubeops.kops"
DEFAULT_CONNECT_TIMEOUT = 10
# An AWS API answers within seconds; 20 s of silence after a request is an endpoint that will not answer.  With
# TIMEOUT_ATTEMPTS tries, such an endpoint is given up after deadline(): 63 s (docs/playbooks.md).
DEFAULT_READ_TIMEOUT = 20
TIMEOUT_ENV = {"connect_timeout": ("KOPS_AWS_CONNECT_TIMEOUT", DEFAULT_CONNECT_TIMEOUT),
               "read_timeout": ("KOPS_AWS_READ_TIMEOUT", DEFAULT_READ_TIMEOUT)}
TIMEOUT_ATTEMPTS = 3
NO_CREDENTIALS = ("no AWS credentials found (botocore: Unable to locate credentials): set access_key and secret_key "
                  "(or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), or profile (or AWS_PROFILE), "
                  "or run where an instance role or container credentials apply")

# The AWS options of every AWS-touching module (doc fragment kubeops.kops.aws), as amazon.aws has them.
# region has no environment fallback here: a cluster's region is its zones' region (as in kops), and a
# node's region is its instance's; AWS_REGION / AWS_DEFAULT_REGION apply where neither is known.
AWS_ARGS = dict(
    access_key=dict(type="str", aliases=["aws_access_key_id", "aws_access_key"], no_log=False,
                    fallback=(env_fallback, ["AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY"])),
    secret_key=dict(type="str", aliases=["aws_secret_access_key", "aws_secret_key"], no_log=True,
                    fallback=(env_fallback, ["AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY"])),
    session_token=dict(type="str", aliases=["aws_session_token"], no_log=True,
                       fallback=(env_fallback, ["AWS_SESSION_TOKEN"])),
    profile=dict(type="str", aliases=["aws_profile"], fallback=(env_fallback, ["AWS_PROFILE", "AWS_DEFAULT_PROFILE"])),
    region=dict(type="str", aliases=["aws_region"]),
    endpoint_url=dict(type="str", aliases=["aws_endpoint_url"], fallback=(env_fallback, ["AWS_URL"])),
)
AWS_OPTION_NAMES = tuple(AWS_ARGS)
# Route53 is global; botocore still wants a region to find its endpoint.
GLOBAL_SERVICE_REGION = "us-east-1"


class AwsError(CloudError):
    """An AWS call failed; the message names the call and what to check."""


class AwsSettings(object):
    """The AWS options of one module run; empty values mean "as botocore resolves it"."""

    def __init__(self, access_key=None, secret_key=None, session_token=None, profile=None, region=None,
                 endpoint_url=None):
        self.access_key = access_key or None
        self.secret_key = secret_key or None
        self.session_token = session_token or None
        self.profile = profile or None
        self.region = region or None
        self.endpoint_url = endpoint_url or None
        if self.profile and (self.access_key or self.secret_key or self.session_token):
            # As amazon.aws: which one would win is not obvious; set the other to '' to use one.
            raise AwsError("profile %r and access_key/secret_key/session_token (options or AWS_* environment "
                           "variables) were both given; use one of them (set the other to '')" % self.profile)
        if bool(self.access_key) != bool(self.secret_key):
            raise AwsError("access_key and secret_key go together; give both (or neither)")

    @classmethod
    def from_params(cls, params):
        return cls(**{name: params.get(name) for name in AWS_OPTION_NAMES})


_settings = AwsSettings()


def argument_spec(module_options=None):
    """AWS_ARGS plus a module's own options, for AnsibleModule."""
    spec = copy.deepcopy(AWS_ARGS)
    spec.update(module_options or {})
    return spec


def configure_module(module):
    """configure() from an AnsibleModule's params; contradicting options fail the module."""
    try:
        return configure(module.params)
    except AwsError as exc:
        module.fail_json(msg=str(exc))


def configure(params):
    """Use these AWS options (a module's params) for every client made from now on in this process."""
    global _settings
    _settings = AwsSettings.from_params(params)
    return _settings


def settings():
    return _settings


def _boto3():
    try:
        import boto3
        import botocore.config
    except ImportError:
        from ansible.module_utils.basic import missing_required_lib
        raise AwsError(missing_required_lib("boto3 and botocore") + " To install it: pip install boto3")
    return boto3, botocore.config


def require_boto3():
    _boto3()


def session(region=None, profile=None):
    """A boto3 session with the configured credentials (profile: override the configured one).

    One per process for the same settings and AWS_* environment: a botocore session registers some 500 event
    handlers, 20 ms each time, and a run asks for one per client."""
    boto3 = _boto3()[0]  # a missing boto3 is said before any cached session
    current = _settings
    profile = profile or current.profile
    region = region or current.region
    key = (region, profile, current.access_key, current.secret_key, current.session_token,
           tuple(sorted((name, value) for name, value in os.environ.items() if name.startswith("AWS_"))))
    with _SESSION_LOCK:
        if key not in _SESSIONS:
            _SESSIONS[key] = _new_session(boto3, region, profile, current)
        return _SESSIONS[key]


def _new_session(boto3, region, profile, current):
    import botocore.exceptions
    import botocore.session
    keys = {} if profile else dict(aws_access_key_id=current.access_key, aws_secret_access_key=current.secret_key,
                                   aws_session_token=current.session_token)
    try:
        botocore_session = botocore.session.get_session()
        loader = aws_models.loader(botocore_session.get_config_variable("data_path"))
        botocore_session.register_component("data_loader", loader)
        created = boto3.session.Session(botocore_session=botocore_session, region_name=region, profile_name=profile,
                                        **keys)
    except botocore.exceptions.BotoCoreError as exc:  # ProfileNotFound and the like
        raise AwsError("AWS profile %r: %s" % (profile, exc))
    with _LOADER_LOCK:  # each boto3 session appends its data directory to the shared loader's search path
        loader.search_paths[:] = list(dict.fromkeys(loader.search_paths))
    return created


def new_client(service, region=None, profile=None, **options):
    """A client of the shared session (boto3's sessions are not thread-safe: clients are made one at a time), whose
    errors name their call (_name_the_call)."""
    with _SESSION_LOCK:
        api_client = session(region, profile).client(service, **options)
    endpoint = options.get("endpoint_url")
    _name_the_call(api_client, endpoint if endpoint != _settings.endpoint_url else None)  # a client's own endpoint
    return api_client


# The key of an error response's ResponseMetadata that names the call (describe_error reads it).
CALL_KEY = "KubeopsCall"
HTML_TITLE = re.compile(rb"<title>\s*([^<]{1,120}?)\s*</title>", re.IGNORECASE)


def _name_the_call(api_client, explicit_endpoint=None):
    """Make every failed call of api_client say which call it was, where, and never carry an HTML page.

    An error response is marked with its call (service, operation, region, endpoint) for describe_error.  An answer
    that is not AWS's (an HTML page from a proxy, a load balancer, a crashed endpoint) would reach the user as
    botocore's "Unable to parse response ... invalid XML received" and the whole page: a 5xx one is read as an error
    of its status (so botocore retries it as any 5xx, and a create whose answer it was is looked up before it is
    sent again); any other becomes an AwsError naming the call."""
    meta = api_client.meta
    source = endpoint_source(meta.service_model.service_id, explicit_endpoint)

    def call(operation):
        return "%s %s in %s at %s" % (meta.service_model.service_id, operation, meta.region_name, meta.endpoint_url)

    def not_aws(operation, status, body):
        title = HTML_TITLE.search(body or b"")
        page = 'an HTML page ("%s")' % title.group(1).decode("utf-8", "replace") if title else "a page that is not AWS's"
        return ("%s answered%s with %s, not an AWS answer: the endpoint or a proxy before it failed; try again, or "
                "check %s" % (call(operation), " HTTP %s" % status if status else "", page, source))

    def before_parse(operation_model=None, response_dict=None, customized_response_dict=None, **kwargs):
        status = response_dict.get("status_code") or 0
        if status >= 500 and _is_html(response_dict):
            message = not_aws(operation_model.name, status, response_dict.get("body"))
            response_dict["body"] = b""  # botocore reads an empty 5xx body as an error of that status
            customized_response_dict["Error"] = {"Code": str(status), "Message": message}

    def after_call(http_response=None, parsed=None, model=None, **kwargs):
        if http_response is not None and http_response.status_code >= 300 and isinstance(parsed, dict):
            parsed.setdefault("ResponseMetadata", {})[CALL_KEY] = call(model.name)

    def after_call_error(exception=None, event_name="", **kwargs):
        if type(exception).__name__ == "ResponseParserError":
            body = str(exception).encode("utf-8", "replace")
            raise AwsError(not_aws(event_name.rsplit(".", 1)[-1], None, body))

    meta.events.register("before-parse", before_parse)
    meta.events.register("after-call", after_call)
    meta.events.register("after-call-error", after_call_error)


def _is_html(response_dict):
    content_type = str((response_dict.get("headers") or {}).get("content-type", "")).lower()
    start = (response_dict.get("body") or b"")[:200].lstrip().lower()
    return "text/html" in content_type or start.startswith((b"<!doctype html", b"<html"))


# The process's sessions, by settings and AWS_* environment (a module run, or a test, that changes them gets another).
_SESSIONS = {}
_SESSION_LOCK = threading.RLock()
_LOADER_LOCK = threading.Lock()


def credentials(aws_session):
    """The session's credentials, or None; an unusable profile or credential source is an AwsError."""
    import botocore.exceptions
    try:
        return aws_session.get_credentials()
    except botocore.exceptions.BotoCoreError as exc:
        raise AwsError("AWS credentials: %s" % exc)


def has_credentials():
    """Whether any AWS credentials resolve (options, environment, profile, instance role)."""
    try:
        _boto3()
    except AwsError:
        return False
    return credentials(session()) is not None


def timeouts():
    """{connect_timeout, read_timeout} in seconds, from KOPS_AWS_CONNECT_TIMEOUT / KOPS_AWS_READ_TIMEOUT."""
    values = {}
    for key, (variable, default) in TIMEOUT_ENV.items():
        raw = os.environ.get(variable)
        try:
            values[key] = float(raw) if raw else default
        except ValueError:
            values[key] = -1
        if values[key] <= 0:
            raise AwsError("%s=%r is not a positive number of seconds" % (variable, raw))
    return values


DEFAULT_MAX_ATTEMPTS = 10


def client_config(max_attempts=None):
    """max_attempts: botocore's retries after the first try; by default AWS_MAX_ATTEMPTS (botocore's variable: the
    tries in all, which a Config's retries would otherwise hide), else DEFAULT_MAX_ATTEMPTS."""
    config = _boto3()[1]
    retries = {"mode": os.environ.get("AWS_RETRY_MODE", "standard")}
    total = os.environ.get("AWS_MAX_ATTEMPTS", "")
    if max_attempts is None and total.isdigit() and int(total) > 0:
        retries["total_max_attempts"] = int(total)
    else:
        retries["max_attempts"] = DEFAULT_MAX_ATTEMPTS if max_attempts is None else max_attempts
    return config.Config(
        retries=retries,
        user_agent_extra=USER_AGENT,
        **timeouts()
    )


def client(service, region=None, profile=None, endpoint_url=None):
    """The one client factory: configured credentials, timeouts, retries; a clear error without credentials.

    endpoint_url: this client's own endpoint (e.g. a state store's), before the configured endpoint_url.
    """
    if credentials(session(region, profile)) is None:
        raise AwsError(NO_CREDENTIALS)
    config = client_config()
    api_client = new_client(service, region, profile, config=config, endpoint_url=endpoint_url or _settings.endpoint_url)
    source = endpoint_source(api_client.meta.service_model.service_id, endpoint_url)
    api_client.meta.events.register("needs-retry", _give_up_on_silence(config.connect_timeout, config.read_timeout,
                                                                       source))
    _announce_waits(api_client, endpoint_url, config)
    return api_client


def endpoint_source(service_id, explicit=None):
    """What set a client's endpoint, as the user would look for it: the option, the variable botocore read."""
    if explicit:
        return "the state store's endpoint option"
    if _settings.endpoint_url:
        return "endpoint_url (or AWS_URL)"
    for variable in ("AWS_ENDPOINT_URL_%s" % service_id.upper().replace(" ", "_").replace("-", "_"), "AWS_ENDPOINT_URL"):
        if os.environ.get(variable):
            return variable
    return "the region's AWS endpoint (set endpoint_url or AWS_ENDPOINT_URL_%s to use another)" % (
        service_id.upper().replace(" ", "_"))


def deadline(config):
    """How long a call to an endpoint that accepts and never answers takes to be given up (TIMEOUT_ATTEMPTS
    tries of the read timeout, and botocore's back-off between them: at most 1 s, then 2 s)."""
    return TIMEOUT_ATTEMPTS * config.read_timeout + 2 ** (TIMEOUT_ATTEMPTS - 1) - 1


def _announce_waits(api_client, explicit_endpoint, config):
    """Each request in flight is a wait (module_utils/waits.py): past 10 s it is announced with the endpoint, the
    variable that set it and when it will be given up."""
    if waits.watcher() is None:
        return
    service_id = api_client.meta.service_model.service_id
    where = "%s (from %s)" % (api_client.meta.endpoint_url, endpoint_source(service_id, explicit_endpoint))
    limit = deadline(config)

    def sent(event_name="", **kwargs):
        key = ("aws", threading.get_ident())
        operation = event_name.rsplit(".", 1)[-1] if event_name.count(".") >= 2 else ""  # before-send.s3.ListObjectsV2
        if key not in _IN_FLIGHT:  # the first try of a call: the notice counts from here, over its retries
            _IN_FLIGHT.add(key)
            waits.start(key, "AWS %s %sat %s" % (service_id, operation + " " if operation else "", where), limit)

    def answered(**kwargs):
        key = ("aws", threading.get_ident())
        _IN_FLIGHT.discard(key)
        waits.stop(key)

    api_client.meta.events.register("before-send", sent)
    api_client.meta.events.register("after-call", answered)
    api_client.meta.events.register("after-call-error", answered)


_IN_FLIGHT = set()


def _give_up_on_silence(connect_timeout, read_timeout, source="endpoint_url (AWS_ENDPOINT_URL)"):
    """A needs-retry hook: after TIMEOUT_ATTEMPTS tries that could not connect or got no answer, stop with a
    message naming the endpoint, the timeout and what to check: source, what set the endpoint (botocore would try
    ten times, with back-off)."""
    import botocore.exceptions

    def hook(attempts=0, caught_exception=None, endpoint=None, **kwargs):
        if attempts < TIMEOUT_ATTEMPTS:
            return
        if isinstance(caught_exception, botocore.exceptions.ReadTimeoutError):
            why = "did not answer within %g s (KOPS_AWS_READ_TIMEOUT)" % read_timeout
        elif isinstance(caught_exception, botocore.exceptions.ConnectTimeoutError):
            why = "did not accept a connection within %g s (KOPS_AWS_CONNECT_TIMEOUT)" % connect_timeout
        elif isinstance(caught_exception, botocore.exceptions.EndpointConnectionError):
            why = "could not be reached (%s)" % caught_exception
        else:
            return
        raise _no_answer_error()(message="AWS endpoint %s %s, %d tries; check %s, the network and proxies" % (
            getattr(endpoint, "host", "?"), why, attempts, source))
    return hook


_NO_ANSWER = []


def _no_answer_error():
    """A botocore ConnectionError subclass (callers catching BotoCoreError see it) with our message."""
    if not _NO_ANSWER:
        import botocore.exceptions

        class AwsNoAnswer(botocore.exceptions.ConnectionError):
            fmt = "{message}"
        _NO_ANSWER.append(AwsNoAnswer)
    return _NO_ANSWER[0]


def paginate(api_client, operation, result_key, **kwargs):
    """Every item of a paginated operation's result_key list."""
    items = []
    for page in api_client.get_paginator(operation).paginate(**kwargs):
        items.extend(page.get(result_key) or [])
    return items


def describe_error(exc, what=None):
    """A short message for a botocore error while doing `what`: the call (service, operation, region, endpoint),
    the error's code and message (see _name_the_call).  Without `what`: the call's own words."""
    if isinstance(exc, AwsError):
        return AwsError("%s: %s" % (what, exc)) if what else exc
    response = getattr(exc, "response", None) or {}
    error = response.get("Error") or {}
    code = error.get("Code") or type(exc).__name__
    if code == "NoCredentialsError":
        return AwsError("%s: %s" % (what, NO_CREDENTIALS))
    if code in ("AwsNoAnswer", "NoRegionError"):
        hint = "; set region (or AWS_REGION)" if code == "NoRegionError" else ""
        return AwsError("%s: %s%s" % (what, exc, hint))
    message = _with_call(response, str(error.get("Message") or exc))
    if "HTTP %s " % code not in message:  # _name_the_call's message names its status already
        message = "%s: %s" % (code, message)
    return AwsError("%s: %s" % (what, message) if what else message)


def _with_call(response, message):
    """message, after the call it answered (service, operation, region, endpoint) unless it starts with it."""
    call = (response.get("ResponseMetadata") or {}).get(CALL_KEY)
    return "%s: %s" % (call, message) if call and not message.startswith(call) else message


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

# What to do when an operation's code means something narrower than the code's general hint: these take
# precedence (the LimitExceeded of AddRoleToInstanceProfile is the one-role-per-profile rule, not an account quota).
OPERATION_HINTS = {
    ("AddRoleToInstanceProfile", "LimitExceeded"): ("the instance profile holds another role already (a profile "
                                                    "takes one); remove that role from it, or delete the profile"),
    ("AttachInternetGateway", "Resource.AlreadyAssociated"): "the gateway is attached to another VPC; detach it there",
    ("AssociateRouteTable", "Resource.AlreadyAssociated"): "the subnet is associated with another route table; "
                                                           "disassociate it there",
}


def as_wanted(call, codes, is_wanted, **kwargs):
    """call(**kwargs) for a mutating call that is not a create, where an error in codes means "already so" when
    is_wanted() (a fresh read) agrees.

    A response lost on the way back is retried (by botocore, or by the next run), and AWS answers the retry with
    the state the first call made: the role already in the instance profile (LimitExceeded), the gateway already
    attached (Resource.AlreadyAssociated).  The object is as wanted, so that is done, not an error; the same code
    for any other reason (the profile holds another role, the gateway another VPC) is raised as it came.
    Returns the call's response, or None when it found the object as wanted.
    """
    import botocore.exceptions
    try:
        return call(**kwargs)
    except botocore.exceptions.ClientError as exc:
        if error_code(exc) in codes and is_wanted():
            return None
        raise


# Kinds whose ownership tags AwsCloud.tags_of reads in one Resource Groups Tagging API call per run; SQS too, for
# the look-alike check (model/aws/lookalike.py: balancers, target groups and the NTH queue carry names derived from
# the cluster name with its dots as dashes).
TAGGED_RESOURCE_TYPES = ("elasticloadbalancing:loadbalancer", "elasticloadbalancing:targetgroup", "events:rule", "sqs")
TAGGING_LOOKUP = "tagging:GetResources"
# GetResources takes up to 20 values in a tag filter; past this many look-alike names (a name with 7 or more dots
# and dashes) one call each 20 would be too many, and providers/aws/update_facts.py asks by name instead.
TAG_FILTER_VALUES = 20
MAX_LOOKALIKES = 3 * TAG_FILTER_VALUES - 1


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
                self._clients[key] = new_client(service, self.region, self.profile, config=client_config(max_attempts=0))
            return self._clients[key]

    @property
    def ec2(self):
        return self.client("ec2")

    def ownership_tags(self):
        return {"KubernetesCluster": self.cluster_name, "kubernetes.io/cluster/%s" % self.cluster_name: "owned"}

    def cluster_filter(self):
        return [{"Name": "tag:KubernetesCluster", "Values": [self.cluster_name]}]

    def tags_of(self, arn, own_call):
        """The tags of an object of a TAGGED_RESOURCE_TYPES kind (a list of {Key, Value}).

        All the cluster's such objects come from one paginated Resource Groups Tagging API GetResources per
        run (filtered by this cluster's KubernetesCluster tag and its look-alikes'; permission tag:GetResources),
        instead of one call per object.  An object it does not list (another cluster's or none's, or tagged a moment ago:
        the tagging API is eventually consistent) is asked with own_call(), the service's own tag call, so
        ownership is never decided by its absence.  Without the permission, every object is asked that way.
        """
        tagged = self.tagged_resources()
        with self._lock:
            if tagged is not None and arn in tagged:
                return tagged[arn]
        return own_call()

    def forget_tags(self, arn):
        """After changing an object's tags: the next tags_of asks its service again."""
        with self._lock:
            tagged = self._cache.get(TAGGING_LOOKUP)
            if tagged is not None:
                tagged.pop(arn, None)

    def tagged_resources(self):
        """{arn: tags} of the TAGGED_RESOURCE_TYPES objects tagged KubernetesCluster=<this cluster> or one of its
        look-alikes (lookalike_cluster_names, up to MAX_LOOKALIKES of them); None when tag:GetResources is denied.
        One paginated call per run (per 20 names)."""
        return self.lookup(TAGGING_LOOKUP, self._cluster_tagged_resources)

    def _cluster_tagged_resources(self):
        import botocore.exceptions
        lookalikes = lookalike_cluster_names(self.cluster_name)
        names = [self.cluster_name] + (lookalikes if len(lookalikes) <= MAX_LOOKALIKES else [])
        found = []
        try:
            for start in range(0, len(names), TAG_FILTER_VALUES):
                found += paginate(self.client("resourcegroupstaggingapi"), "get_resources", "ResourceTagMappingList",
                                  TagFilters=[{"Key": "KubernetesCluster", "Values": names[start:start + TAG_FILTER_VALUES]}],
                                  ResourceTypeFilters=list(TAGGED_RESOURCE_TYPES))
        except botocore.exceptions.ClientError as exc:
            if error_code(exc) in ("AccessDenied", "AccessDeniedException", "UnauthorizedOperation"):
                return None
            raise
        return {item["ResourceARN"]: item.get("Tags") or [] for item in found}

    def retryable(self, exc):
        if Cloud.retryable(self, exc):
            return True
        code = error_code(exc)
        message = str(((getattr(exc, "response", None) or {}).get("Error") or {}).get("Message") or "")
        return code in RETRYABLE_CODES or any(text in message for text in RETRYABLE_MESSAGES)

    def failure(self, exc):
        code = error_code(exc)
        if type(exc).__name__ == "NoCredentialsError":
            return Failure("", NO_CREDENTIALS)
        if code is None:
            return Cloud.failure(self, exc)
        message = ((exc.response.get("Error") or {}).get("Message") or str(exc)).strip()
        operation = getattr(exc, "operation_name", "")
        hint = OPERATION_HINTS.get((operation, code), HINTS.get(code, ""))
        if (exc.response.get("ResponseMetadata") or {}).get(CALL_KEY):
            return Failure(code, _with_call(exc.response, message), hint)
        return Failure(code, "%s%s" % ("%s: " % operation if operation else "", message), hint)


def tag_list(tags):
    return [{"Key": k, "Value": v} for k, v in sorted(tags.items())]


def tag_dict(tag_items):
    return {t["Key"]: t["Value"] for t in tag_items or []}


# -- creating an object once ---------------------------------------------------------------------------
# EC2 cannot deduplicate most creates (CreateVpc, AllocateAddress, CreateInternetGateway, CreateDhcpOptions,
# CreateSecurityGroup... take no ClientToken), and botocore's own retry of a 5xx re-sends the create: a
# response lost on the way back leaves two objects.  So a create is sent by a client that never retries,
# carries a unique token tag (and ClientToken where the API has one), and after an ambiguous failure the
# object is looked up by that tag before the create is sent again.  Creates of objects whose names are
# unique in the account or VPC (IAM roles and instance profiles, target groups, load balancers, listeners,
# autoscaling groups) are looked up by name instead (create_named).
CREATE_TOKEN_TAG = "kubeops.kops/create-token"
THROTTLING_CODES = frozenset(("Throttling", "ThrottlingException", "RequestLimitExceeded", "RequestThrottled",
                              "TooManyRequestsException", "SlowDown"))
# What a create answers when the object (or the unique thing it takes) is already there.  After an
# ambiguous failure of the same create, it is the lost call's work: the object is looked up (by token or by
# name, and it must be this cluster's own) instead of failing the run.
ALREADY_EXISTS_CODES = frozenset((
    "EntityAlreadyExists",                                       # IAM CreateRole, CreateInstanceProfile
    "DuplicateTargetGroupName", "DuplicateLoadBalancerName", "DuplicateListener",  # ELBv2
    "AlreadyExists",                                             # autoscaling CreateAutoScalingGroup
    "InvalidGroup.Duplicate",                                    # EC2 CreateSecurityGroup
    "InvalidSubnet.Conflict",                                    # EC2 CreateSubnet: the CIDR is taken
    "Resource.AlreadyAssociated",                                # EC2 CreateNatGateway: the EIP is taken
    "InvalidLaunchTemplateName.AlreadyExistsException",          # EC2 CreateLaunchTemplate
))
CREATE_ATTEMPTS = 5
# Lookups after an "already exists" answer, a pause apart: the object exists, but describes are
# eventually consistent.
LOOKUPS_AFTER_EXISTS = 3


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
    create again only if it is not there; an "already exists" answer after it (ALREADY_EXISTS_CODES) looks
    again.  The token tag is sent with the cluster's ownership tags, so what it finds is this cluster's.
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


def create_named(cloud, service, operation, find_made, sleep=None, **kwargs):
    """Send the create of an object whose name is unique (an IAM role, a target group, an autoscaling
    group...) at most once: (None, the create's response), or (what find_made() found, None) when a try
    whose answer was lost had made it.

    find_made(): the object of that name as the task's find reads it, or None; it raises when the object
    is not this cluster's own (never adopted), so a name taken by another cluster stays an error.  It is
    asked only after an ambiguous failure: before sending the create again, and after an "already
    exists" answer to that second create.
    """
    import time
    sleep = sleep or time.sleep
    found, response = _send_once(cloud.single_attempt_client(service), operation, lambda _response: None,
                                 find_made, sleep, kwargs)
    return (found if response is None else None), response


def _send_once(api, operation, id_of, find, sleep, kwargs):
    delay = 1.0
    after_ambiguous = False
    for attempt in range(1, CREATE_ATTEMPTS + 1):
        try:
            response = getattr(api, operation)(**kwargs)
            return id_of(response), response
        except Exception as exc:  # pylint: disable=broad-except
            if ambiguous(exc):
                after_ambiguous = True
                for lookup in range(2):
                    found = find()
                    if found is not None:
                        return found, None
                    if lookup == 0:
                        sleep(delay)
            elif after_ambiguous and error_code(exc) in ALREADY_EXISTS_CODES:
                # The lost call made it; the lookups before this create did not see it yet.
                for lookup in range(LOOKUPS_AFTER_EXISTS):
                    found = find()
                    if found is not None:
                        return found, None
                    sleep(delay * (lookup + 1))
                raise
            elif error_code(exc) not in THROTTLING_CODES:
                raise
            if attempt == CREATE_ATTEMPTS:
                raise
            sleep(delay)
            delay = min(delay * 2, 10.0)
    raise AssertionError("unreachable")
