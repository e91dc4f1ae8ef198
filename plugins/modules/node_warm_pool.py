#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: node_warm_pool
short_description: Whether this AWS instance is warming, and completing its warm pool lifecycle action
version_added: 0.1.0
description:
  - With O(action=mode), tells whether the instance is entering an AWS warm pool, as kops' nodeup does, from the
    instance metadata; it is when C(autoscaling/target-lifecycle-state) starts with C(Warmed:). Only asked when the nodeup
    config has C(WarmPoolImages) (a group with a warm pool) and the node is a worker or an API server;
    otherwise, and when the key does not exist, the instance is not warming.
  - With O(action=complete), completes the group's C(kops-warmpool) lifecycle hook for this instance
    (C(CONTINUE)) when the nodeup config has C(EnableLifecycleHook) and the group has the hook, as kops' nodeup
    does after every run; nothing otherwise.
options:
  nodeup_config:
    description: The node's nodeup config.
    type: dict
    required: true
  action:
    description: V(mode) to ask whether the instance is warming, V(complete) to complete the lifecycle action.
    type: str
    choices: [mode, complete]
    default: mode
  instance_id:
    description: This instance. Read from the instance metadata service (IMDSv2) when omitted.
    type: str
  imds_endpoint:
    description: The instance metadata service (an emulator in tests).
    type: str
    default: http://169.254.169.254
extends_documentation_fragment:
  - kubeops.kops.aws
attributes:
  check_mode:
    description: Asks the metadata service; completes nothing.
    support: full
  diff_mode:
    description: Not applicable.
    support: none
requirements:
  - boto3 (O(action=complete))
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Is this instance entering the warm pool?
  kubeops.kops.node_warm_pool:
    nodeup_config: "{{ nodeup_document }}"
  register: nodeup_mode

- name: Let the instance go on into the warm pool or into service
  kubeops.kops.node_warm_pool:
    nodeup_config: "{{ nodeup_document }}"
    action: complete
"""

RETURN = r"""
mode:
  description: kops' configuration mode, V(Warming) or empty.
  returned: action is mode
  type: str
target_lifecycle_state:
  description: The metadata's target lifecycle state (empty when not asked or absent).
  returned: action is mode
  type: str
completed:
  description: Whether the lifecycle action was completed.
  returned: action is complete
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws


def main():
    module = AnsibleModule(argument_spec=aws.argument_spec(dict(
        nodeup_config=dict(type="dict", required=True),
        action=dict(type="str", choices=["mode", "complete"], default="mode"),
        instance_id=dict(type="str"),
        imds_endpoint=dict(type="str", default="http://169.254.169.254"),
    )), supports_check_mode=True)
    aws.configure_module(module)
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import warm_pool

    params = module.params
    config = params["nodeup_config"]
    if params["action"] == "mode":
        if not warm_pool.asks_for_mode(config):
            module.exit_json(changed=False, mode="", target_lifecycle_state="")
        try:
            state = warm_pool.metadata("autoscaling/target-lifecycle-state", endpoint=params["imds_endpoint"])
        except Exception as exc:  # pylint: disable=broad-except  # URL and connection errors alike
            module.fail_json(msg="instance metadata (IMDSv2) did not answer for autoscaling/target-lifecycle-state "
                                 "(%s); kops' nodeup fails too" % exc)
        module.exit_json(changed=False, mode=warm_pool.mode_of(state), target_lifecycle_state=state or "")
    settings = (config.get("kubeops") or {}).get("warmPool") or {}
    if not config.get("EnableLifecycleHook") or not settings:
        module.exit_json(changed=False, completed=False)
    try:
        instance_id = params["instance_id"] or warm_pool.metadata("instance-id", endpoint=params["imds_endpoint"])
    except Exception as exc:  # pylint: disable=broad-except
        module.fail_json(msg="instance metadata (IMDSv2) did not answer (%s): give instance_id" % exc)
    if module.check_mode:
        module.exit_json(changed=True, completed=False)
    region = params["region"] or ((config.get("kubeops") or {}).get("cloud") or {}).get("region")
    try:
        completed = warm_pool.complete_lifecycle_action(aws.client("autoscaling", region=region),
                                                        settings["autoscalingGroup"], settings["lifecycleHook"],
                                                        instance_id)
    except aws.AwsError as exc:
        module.fail_json(msg=str(exc))
    except Exception as exc:  # pylint: disable=broad-except  # botocore errors: say which call
        module.fail_json(msg=str(aws.describe_error(exc, "completing the %s lifecycle action of %s" % (
            settings["lifecycleHook"], settings["autoscalingGroup"]))))
    module.exit_json(changed=completed, completed=completed)


if __name__ == "__main__":
    main()
