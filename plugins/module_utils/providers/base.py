# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What a cloud package (providers/<cloud>/) gives the rest of the collection: its Provider.

Each package's provider.py defines PROVIDER, an instance of a Provider subclass (the package's __init__.py is
empty).  provider.py stays light (no boto3, no google-auth, no model): every part is loaded when asked for, by a
plain import inside the method, so that Ansible's module packager (AnsiballZ) still sees it and ships it.  A part a cloud does not have
is refused with one line naming the cloud and the verb (NotBuilt), never an AttributeError.
"""

from __future__ import annotations


class NotBuilt(ValueError):
    """A verb a cloud's package does not provide."""


class Provider(object):
    """A cloud: kops' cloudProvider value and everything cloud-specific behind it.  Subclasses override what they
    provide; the defaults say what is not built."""

    name = None  # the spec's cloudProvider
    # {option: spec field} read from the completed spec into day2_cloud() (GCE: its project).
    spec_options = {}
    # (regex whose group 1 is the region, an example zone) for a cloud zones.ZONE_PATTERNS does not hold.
    zone_pattern = None

    def _not_built(self, verb):
        raise NotBuilt("spec.cloudProvider: %s is not built for %s clusters" % (verb, self.name))

    # --- the update pipeline (updates.py) ---
    def driver(self):
        """The update driver: tasks, cloud, Terraform providers, boot environment (see providers/aws/driver.py)."""
        self._not_built("cluster_update")

    def check_region(self, region, completed):
        """Refuse a region option the cluster's zones contradict (kops derives the region from the zones)."""
        from ansible_collections.kubeops.kops.plugins.module_utils.api import validation_aws
        from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of
        validation_aws.check_region(region, region_of(completed["spec"]))

    # --- day 2: validate, kubeconfig, rolling update ---
    def reader(self):
        """A module with cloud(name, region, profile, **spec_options), cloud_groups(cloud), api_endpoint(cloud)."""
        self._not_built("reading the running cluster's groups")

    def rolling(self, cloud):
        """What rolling update replaces instances with (rolling/roller.py's cloud side)."""
        self._not_built("rolling update")

    def inventory_hosts(self, plugin, service, cluster, groups, region):
        """[(host, variables, groups)] of the running cluster, for the kubeops.kops.kops inventory plugin (plugin: its
        options, get_option); a ValueError says what went wrong."""
        self._not_built("the kops inventory")

    # --- delete ---
    def deletion(self):
        """A module with cloud(name, region, profile, spec), discover(cloud, spec), KINDS_BY_NAME, any_owned(cloud)
        and optionally rediscover(cloud, spec, reports) (see deletion/__init__.py)."""
        self._not_built("cluster_delete")

    # --- modules ---
    def argument_spec(self):
        """The options this cloud adds to every kubeops.kops module (documented by its doc fragment)."""
        return {}

    def configure_module(self, module):
        """Apply this cloud's options for the module's run (credentials, endpoints)."""

    def cloud_facts(self, params, data, zone_hint):
        """Cloud facts that look up what cloud_facts does not give, or None when this cloud looks nothing up for
        this zone (the caller then uses the data as given)."""
        return None
