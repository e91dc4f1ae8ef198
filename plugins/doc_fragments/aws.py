# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations


class ModuleDocFragment(object):
    # The options and names are amazon.aws' (doc fragments common and region), so module_defaults
    # groups and habits carry over; module_utils/cloud/aws.py AWS_ARGS is the argument spec.
    DOCUMENTATION = r"""
options:
  access_key:
    description:
      - AWS access key ID.
      - The E(AWS_ACCESS_KEY_ID) or E(AWS_ACCESS_KEY) environment variables may also be used, in that order.
      - Without O(access_key), O(profile) or their environment variables, credentials resolve as the AWS CLI
        resolves them (shared credentials files, SSO, the instance role or container credentials).
      - Mutually exclusive with O(profile).
    type: str
    aliases: [aws_access_key_id, aws_access_key]
  secret_key:
    description:
      - AWS secret access key, with O(access_key).
      - The E(AWS_SECRET_ACCESS_KEY) or E(AWS_SECRET_KEY) environment variables may also be used, in that order.
    type: str
    aliases: [aws_secret_access_key, aws_secret_key]
  session_token:
    description:
      - AWS STS session token, for temporary credentials.
      - The E(AWS_SESSION_TOKEN) environment variable may also be used.
    type: str
    aliases: [aws_session_token]
  profile:
    description:
      - A named AWS profile (from C(~/.aws/config) and C(~/.aws/credentials)).
      - The E(AWS_PROFILE) or E(AWS_DEFAULT_PROFILE) environment variables may also be used.
      - Mutually exclusive with O(access_key), O(secret_key) and O(session_token); set those to an empty
        string when they come from the environment and O(profile) should win.
    type: str
    aliases: [aws_profile]
  region:
    description:
      - The AWS region.
      - When omitted, a cluster's region is the region of its zones (as in kops), M(kubeops.kops.etcd_volume)
        and M(kubeops.kops.etcd_peers) ask the instance metadata, and otherwise E(AWS_REGION),
        E(AWS_DEFAULT_REGION) or the profile's region apply.
      - Route53 and IAM are global and ignore it.
    type: str
    aliases: [aws_region]
  endpoint_url:
    description:
      - URL to use instead of the AWS endpoints, for every AWS service (for example an S3-compatible store or
        a test server).
      - The E(AWS_URL) environment variable may also be used; botocore's own E(AWS_ENDPOINT_URL) and
        E(AWS_ENDPOINT_URL_<SERVICE>) apply when this option is not set.
    type: str
    aliases: [aws_endpoint_url]
notes:
  - Every AWS client has a connect timeout of 10 seconds and a read timeout of 20 seconds; the environment
    variables E(KOPS_AWS_CONNECT_TIMEOUT) and E(KOPS_AWS_READ_TIMEOUT) (seconds) change them. An endpoint
    that cannot be reached or does not answer is given up after 3 tries (an endpoint that accepts and never
    answers, after at most 63 seconds with the defaults), with a message naming it and the setting that chose it
    (O(endpoint_url), E(AWS_ENDPOINT_URL_<SERVICE>) or E(AWS_ENDPOINT_URL)).
  - A call that waits longer than 10 seconds says so while the task runs (which endpoint, and when it gives up).
  - Throttling and server errors are retried by botocore (standard mode, up to 10 attempts;
    E(AWS_RETRY_MODE=adaptive) changes the mode, E(AWS_MAX_ATTEMPTS) the attempts). A server error answered with an
    HTML page (a proxy's, a load balancer's) is retried as one, and reported naming the call, its region and endpoint,
    without the page.
  - Environment variables and AWS configuration files are read on the host the module runs on.
requirements:
  - boto3 and botocore (for AWS and s3:// stores)
"""
