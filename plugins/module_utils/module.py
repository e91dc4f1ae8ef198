# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What every kubeops.kops module shares: common options and error reporting.

Modules stay thin: parse arguments, call clusters.ClusterService, report.
Errors from the layers become one fail_json whose msg names the field and the
fix, with the individual problems in ``errors``.
"""

from __future__ import annotations

import functools
import traceback

from ansible.module_utils.basic import AnsibleModule

STATE_STORE_ARGS = dict(
    state_store=dict(type="str"),
    cloud_facts=dict(type="dict"),
)


class KopsModule(AnsibleModule):
    def __init__(self, argument_spec, **kwargs):
        spec = dict(STATE_STORE_ARGS)
        spec.update(argument_spec)
        kwargs.setdefault("supports_check_mode", True)
        AnsibleModule.__init__(self, argument_spec=spec, **kwargs)

    def service(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.clusters import ClusterService
        from ansible_collections.kubeops.kops.plugins.module_utils.completion.cloudfacts import StaticCloudFacts
        return ClusterService(self.params.get("state_store"), facts=StaticCloudFacts(self.params.get("cloud_facts")))

    def fail_from(self, exc):
        problems = [str(e) for e in getattr(exc, "errors", [])]
        self.fail_json(msg=str(exc), errors=problems, exception=traceback.format_exc())


def reports_errors(run):
    """Run a module's main body, turning our errors into fail_json (nothing else is caught)."""
    @functools.wraps(run)
    def wrapper(module):
        try:
            return run(module)
        except ValueError as exc:  # ValidationError, ClusterError, store errors: all ValueErrors by design
            module.fail_from(exc)
    return wrapper
