# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A node in an AWS warm pool, as kops' nodeup handles it (upup/pkg/fi/nodeup/command.go).

- Whether it is warming: the instance metadata's autoscaling/target-lifecycle-state starts with "Warmed:"
  (getAWSConfigurationMode), asked only of groups with a warm pool (the config has WarmPoolImages) and of roles
  that autoscale (workers and API servers).  Warming, nodeup pulls the warm pool's images and leaves the kubelet
  stopped and disabled; the instance is stopped or hibernated after, and configured again when it leaves the pool.
- The lifecycle action: with EnableLifecycleHook, after every run the kops-warmpool hook of the group's autoscaling
  group is completed (CONTINUE), so the instance goes on into the pool or into service
  (completeWarmingLifecycleAction).
"""

from __future__ import annotations

from ansible.module_utils.urls import open_url

IMDS = "http://169.254.169.254"
WARMING = "Warming"  # kops' ConfigurationModeWarming
# Roles whose groups autoscale (kops: role.HasNode() || role.HasAPIServer()); the control plane's do not.
AUTOSCALED_ROLES = ("Node", "APIServer")


def asks_for_mode(config):
    """Whether this node asks the metadata service if it is warming (kops: a warm pool, a role that autoscales)."""
    kubeops = config.get("kubeops") or {}
    return ("WarmPoolImages" in config and (kubeops.get("cloud") or {}).get("provider") == "aws"
            and kubeops.get("role") in AUTOSCALED_ROLES)


def mode_of(target_lifecycle_state):
    """kops' configuration mode for the metadata's target-lifecycle-state (None: no such key, not in a group)."""
    return WARMING if (target_lifecycle_state or "").startswith("Warmed:") else ""


def _imds_token(endpoint, timeout):
    return open_url(endpoint + "/latest/api/token", method="PUT", timeout=timeout, use_proxy=False,
                    headers={"X-aws-ec2-metadata-token-ttl-seconds": "300"}).read().decode("ascii")


def metadata(path, endpoint=IMDS, timeout=2.0):
    """One instance metadata value (IMDSv2); None when the key does not exist (404)."""
    from ansible.module_utils.six.moves.urllib.error import HTTPError
    token = _imds_token(endpoint, timeout)
    try:
        response = open_url("%s/latest/meta-data/%s" % (endpoint, path), timeout=timeout, use_proxy=False,
                            headers={"X-aws-ec2-metadata-token": token})
    except HTTPError as exc:
        if exc.code == 404:
            return None
        raise
    return response.read().decode("utf-8").strip()


def complete_lifecycle_action(autoscaling, group, hook, instance_id):
    """Complete the group's hook for this instance (CONTINUE) when the group has it; whether it did."""
    hooks = autoscaling.describe_lifecycle_hooks(AutoScalingGroupName=group, LifecycleHookNames=[hook])
    if not hooks.get("LifecycleHooks"):
        return False
    autoscaling.complete_lifecycle_action(AutoScalingGroupName=group, LifecycleHookName=hook, InstanceId=instance_id,
                                          LifecycleActionResult="CONTINUE")
    return True
