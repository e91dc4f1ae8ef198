# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The registry of clouds: spec.cloudProvider -> its package providers/<cloud>/ and the Provider it defines
(providers/<cloud>/provider.py's PROVIDER).

This is the one place that maps a cloud to code.  Everything cloud-specific (update driver, day-2 reader,
rolling, deletion, inventory, cloud facts, module options, node functions) is reached as
provider(name).<part>() (providers/base.py names the parts).  A new cloud is a new package providers/<cloud>/
with PROVIDER in its provider.py: it is found on disk (provider_names.py), nothing else is edited.

aws and gce are imported by name below, so that Ansible's module packager ships them with every module that
imports this registry; a package added later is imported from the collection directory the action plugins
hand to their module (provider_names.enable_collection_imports, docs/architecture.md "Adding a cloud").
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import provider_names
from ansible_collections.kubeops.kops.plugins.module_utils.providers.base import NotBuilt
from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of


def _aws():
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import provider
    return provider.PROVIDER


def _gce():
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import provider
    return provider.PROVIDER


# The packages imported by name (shipped by AnsiballZ); the others are found on disk.
BUILT_IN = {"aws": _aws, "gce": _gce}


class DriverError(NotBuilt):
    pass


CloudReaderError = DriverError  # the day-2 verbs' name for it


def names():
    return provider_names.names()


def provider(name, verb="kubeops.kops"):
    """The Provider of cloud name; a cloud without a package is refused, naming those that have one."""
    if name in BUILT_IN:
        return BUILT_IN[name]()
    if isinstance(name, str) and name in provider_names.discovered():
        provider_names.enable_collection_imports()
        try:
            return provider_names.declared(name)
        except TypeError as exc:  # abc: PROVIDER = ...() of a class that leaves a method of the contract out
            raise DriverError("providers/%s/provider.py: %s; define it (providers/base.py Provider says what it "
                              "answers)" % (name, exc))
    raise DriverError("spec.cloudProvider: %s is built for %s, not %r" % (verb, ", ".join(names()), name))


def provider_for(spec, verb="kubeops.kops"):
    return provider(spec.get("cloudProvider"), verb)


def driver_for(spec):
    """The update driver of a completed cluster spec's cloudProvider."""
    return provider_for(spec, "cluster_update").driver()


def reader_for(spec):
    return provider_for(spec, "reading the running cluster's groups").reader()


def cloud_for(completed, region=None, profile=None, hosts=None):
    """(reader module, its cloud) for a completed cluster; region defaults to the spec's.  hosts: {instance group:
    [inventory host]}, the machines of a cloud whose reader takes them from the inventory (metal); others ignore it."""
    spec = completed["spec"]
    cloud = provider_for(spec, "reading the running cluster's groups")
    options = {option: spec.get(field) for option, field in cloud.spec_options.items()}
    reader = cloud.reader()
    if getattr(reader, "MACHINES_FROM_INVENTORY", False):
        options["hosts"] = hosts
    return reader, reader.cloud(completed["metadata"]["name"], region or region_of(spec), profile, **options)
