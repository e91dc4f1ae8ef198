# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What every kubeops.kops module takes from the clouds: providers/<cloud>/options.py's argument_spec(),
configure_module(module), cloud_facts(params, data, zone_hint) (None: this cloud looks nothing up for the zone) and,
where a cloud's library raises errors of its own, cloud_error(exc) (its KopsError, or None: not this cloud's).

A registry of its own, apart from registry.py, so that a module ships the clouds' options (cloud/aws.py) and not
every cloud's update driver with them.  aws and gce by name (Ansible's packager ships them); a cloud added as a
package with an options.py is found on disk (provider_names.part).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import provider_names


def _aws():
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import options
    return options


def _gce():
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import options
    return options


BUILT_IN = {"aws": _aws, "gce": _gce}


def _each():
    for name in provider_names.names():
        options = provider_names.part(name, "options", BUILT_IN)
        if options is not None:
            yield options


def argument_spec():
    spec = {}
    for options in _each():
        spec.update(options.argument_spec())
    return spec


def configure_module(module):
    for options in _each():
        options.configure_module(module)


def cloud_facts(params, data, zone_hint):
    """The first cloud's facts that look something up for zone_hint, else None."""
    for options in _each():
        facts = options.cloud_facts(params, data, zone_hint)
        if facts is not None:
            return facts
    return None


def cloud_error(exc):
    """exc, a cloud library's error no layer explained, as the KopsError of the cloud it came from; else None."""
    for options in _each():
        explain = getattr(options, "cloud_error", None)
        error = explain(exc) if explain is not None else None
        if error is not None:
            return error
    return None
