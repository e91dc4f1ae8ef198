# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What a cloud package (providers/<cloud>/) gives the rest of the collection: its Provider.

Each package's provider.py defines PROVIDER, an instance of a Provider subclass (the package's __init__.py is
empty).  provider.py stays light (no boto3, no google-auth, no model): every part is loaded when asked for, by a
plain import inside the method, so that Ansible's module packager (AnsiballZ) still sees it and ships it.  A part a cloud does not have
is refused with one line naming the cloud and the verb (NotBuilt), never an AttributeError.

Three parts have registries of their own, so that a module ships only the part it uses (Ansible's packager
ships every module a registry names): the modules' cloud options (<cloud>/options.py, providers/module_options.py),
deletion (<cloud>/deletion.py, providers/deleters.py) and the node functions (<cloud>/node.py, providers/node.py).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError


class NotBuilt(CloudError):
    """A verb a cloud's package does not provide."""


class Driver(object):
    """What every update driver (Provider.driver()) answers the same way unless its cloud does otherwise: the hooks
    of features only some clouds have, so that a new cloud's driver need not know them."""

    def karpenter_nodes(self, cloud_factory, completed, groups, user_data, warn):
        """What each Karpenter group's EC2NodeClass and NodePool take from the cloud's model (AWS only); None."""
        del cloud_factory, completed, groups, user_data, warn  # the drivers' common signature
        return None

    def account_id(self, cloud):
        """The cloud account the addons and the model name (AWS: the termination handler's queue URL, the
        service-account roles' ARNs), asked of cloud before the model is built; None where a cloud has none."""
        del cloud  # the drivers' common signature
        return None

    def recall_made_objects(self, cloud, store, tasks, dry_run):
        """Before a direct run: hand the cloud what the cluster's own record in the store says earlier runs made,
        where objects no query by tag finds are looked for (AWS's service-account IAM); a real run also records what
        its tasks ask for before anything is made.  Returns what record_made_objects keeps after the run; None."""
        del cloud, store, tasks, dry_run  # the drivers' common signature
        return None

    def record_made_objects(self, store, recalled, dry_run):
        """After a direct run that succeeded: the cluster's record is what recall_made_objects returned.  Nothing."""
        del store, recalled, dry_run  # the drivers' common signature


class Provider(object):
    """A cloud: kops' cloudProvider value and everything cloud-specific behind it.  Subclasses override what they
    provide; the defaults say what is not built."""

    name = None  # the spec's cloudProvider
    # {option: spec field} read from the completed spec into day2_cloud() (GCE: its project).
    spec_options = {}
    # (regex whose group 1 is the region, an example zone) for a cloud zones.ZONE_PATTERNS does not hold.
    zone_pattern = None
    # What kops' create cluster gives a new cluster of this cloud beyond the channel and the cloud's facts, read as
    # data by completion/ (provider_names.declared) for a cloud added as a package:
    default_image = None  # the image when the channel has none for this cloud (kops' defaultImage)
    machine_types = True  # False: instance groups get no machineType (kops' defaultMachineType gives none)
    assigns_network_cidrs = True  # False: no networkCIDR nor subnet CIDRs (kops' PerformAssignments)
    # True: kops names the cloud by the label alpha.kops.k8s.io/cloud, not spec.cloudProvider (api/objects.py)
    named_by_label = False

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
