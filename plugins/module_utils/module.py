# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What every kubeops.kops module shares: common options and error reporting.

Modules stay thin: parse arguments, call clusters.ClusterService, report.
Errors from the layers become one fail_json whose msg names the field and the
fix, one line per problem (printed once: no copy of them in another key).
"""

from __future__ import annotations

import functools
import traceback

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.kubeops.kops.plugins.module_utils import errors
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.providers import module_options

STATE_STORE_ARGS = dict(
    state_store=dict(type="str"),
    cloud_facts=dict(type="dict"),
    # None: look up when the cloud's credentials resolve (kops always asks its cloud); true: always; false: never.
    cloud_lookup=dict(type="bool"),
)


class KopsModule(AnsibleModule):
    def __init__(self, argument_spec, **kwargs):
        # Each cloud's options (its doc fragment), from its package (providers/<cloud>/).
        spec = module_options.argument_spec()
        spec.update(STATE_STORE_ARGS)
        spec.update(argument_spec)
        kwargs.setdefault("supports_check_mode", True)
        AnsibleModule.__init__(self, argument_spec=spec, **kwargs)
        if objects.yaml is None:
            self.fail_json(msg=missing_required_lib("PyYAML"))
        module_options.configure_module(self)

    def service(self, zone_hint=None):
        """The cluster service over this module's state store and cloud facts.

        zone_hint: a zone of the cluster, to find the AWS region for lookups
        when the region option is not given.
        """
        from ansible_collections.kubeops.kops.plugins.module_utils.clusters import ClusterService
        self._kops_service = ClusterService(self.params.get("state_store"), facts=self.cloud_facts(zone_hint))
        if self._name and self._name != "basic.py":  # Ansible passes the task's module name; a lease names it
            self._kops_service.store.owner = self._name
        # What the spec's history records of a write (modules that write the spec take these options).
        self._kops_service.store.change_cause = self.params.get("change_cause")
        self._kops_service.store.history_limit = self.params.get("history_limit")
        return self._kops_service

    def _warn_store_notes(self):
        """What the state store did besides the task (an interrupted write finished, a lease taken over)."""
        service = getattr(self, "_kops_service", None)
        for note in service.notes if service is not None else []:
            self.warn(note)

    def exit_json(self, **kwargs):
        self._warn_store_notes()
        AnsibleModule.exit_json(self, **kwargs)

    def fail_json(self, msg, **kwargs):
        self._warn_store_notes()
        AnsibleModule.fail_json(self, msg, **kwargs)

    def cloud_facts(self, zone_hint=None):
        """Facts from cloud_facts, the rest looked up by the first cloud that looks up facts for zone_hint's zone
        (providers/<cloud>/options.py: AWS asks EC2 when cloud_lookup allows it); else the facts as given."""
        from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts
        data = self.params.get("cloud_facts")
        facts = module_options.cloud_facts(self.params, data, zone_hint)
        return facts if facts is not None else cloudfacts.StaticCloudFacts(data)

    def fail_from(self, exc):
        """One fail_json for an error: a KopsError's message and fix once, never a traceback (it is bad input or a
        refusal, not a bug); any other ValueError (a library refusing a value) also with its traceback."""
        if isinstance(exc, errors.KopsError):
            self.fail_json(**exc.result())
        else:
            self.fail_json(msg=str(exc), exception=traceback.format_exc())


def reports_errors(run):
    """Run a module's main body, turning our errors into fail_json (nothing else is caught).

    Every error the layers raise is a KopsError (a ValueError; a cloud task's failure too): a module needs no
    try/except of its own, only where it adds something (context, or result keys besides msg).  A cloud library's
    error that no layer explained (a botocore error of a lookup outside the task graph) is said as its cloud says
    it, in one line naming the call (providers/module_options.cloud_error); anything else is a bug, left to
    Ansible's traceback."""
    @functools.wraps(run)
    def wrapper(module):
        try:
            return run(module)
        except ValueError as exc:
            module.fail_from(exc)
        except Exception as exc:  # pylint: disable=broad-except
            error = module_options.cloud_error(exc)
            if error is None:
                raise
            module.fail_from(error)
    return wrapper
