# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The cloud contract: what a cloud package (providers/<cloud>/) answers to the rest of the collection.

Each package's provider.py defines PROVIDER, an instance of a Provider subclass (the package's __init__.py is
empty).  provider.py stays light (no boto3, no google-auth, no model): every part is loaded when asked for, by a
plain import inside the method, so that Ansible's module packager (AnsiballZ) still sees it and ships it.  A part a
cloud does not have is refused with one line naming the cloud and the verb (NotBuilt), never an AttributeError.

The contract, by who calls it (tests/unit/cloud/test_provider_contract.py checks every registered cloud):

- Provider (provider.py's PROVIDER): its data, read by the layers below providers/ through provider_names.declared
  (completion/, api/, nodeconfig/, rolling/: what kops' tables per cloud held), and its parts.
- Driver (Provider.driver()): the update pipeline (updates.py), direct, Terraform, CloudFormation and check mode.
- ReaderPart (Provider.reader(), <cloud>/groups.py): day 2 (validate, kubeconfig, rolling update, channel_apply).
- RollingSide (Provider.rolling(cloud)): what rolling/roller.py replaces instances with.
- Provider.inventory_hosts: the kubeops.kops.kops inventory plugin.
- DeletionPart (<cloud>/deletion.py, providers/deleters.py) and the DeletionCloud it returns: delete cluster
  (deletion/__init__.py's walker) and the cluster module's "does the cloud still hold it" check.
- OptionsPart (<cloud>/options.py, providers/module_options.py): every module's cloud options.
- NodePart (<cloud>/node.py, providers/node.py): the node modules (etcd_volume, etcd_peers, api_dns).

Three parts have registries of their own, so that a module ships only the part it uses (Ansible's packager
ships every module a registry names): options, deletion and the node functions.  Those parts are modules, not
classes: their contract classes below document the functions a module defines, and unanswered() checks them.

Check mode: whatever a caller runs with dry_run true (check mode) must make no mutating call to the cloud;
the methods that receive dry_run say what they do then.  Reading (find, describe, list) is allowed.
"""

from __future__ import annotations

import abc

from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError


class NotBuilt(CloudError):
    """A verb a cloud's package does not provide."""


def unanswered(implementation, contract):
    """The names contract declares abstract (every cloud must answer them) that implementation (a module or an
    object) does not define as something callable, sorted; [] when it satisfies the contract."""
    def answered(name):
        member = getattr(implementation, name, None)
        return callable(member) and not getattr(member, "__isabstractmethod__", False)  # not the contract's own
    return sorted(name for name in getattr(contract, "__abstractmethods__", ()) if not answered(name))


class Driver(abc.ABC):
    """The update driver (Provider.driver()): what updates.py asks of a cloud, in the order it asks.

    Data every driver declares: provider (its cloud's name) and targets (what cluster_update's target may be:
    "direct" applies through cloud(), "terraform" renders terraform_providers() and the tasks, "cloudformation"
    the tasks' templates).  The pipeline first completes the cluster and its groups, then, for a direct run
    (dry_run true in check mode): cloud, choose_names, control_plane_addresses, boot_environment (the groups'
    user data), karpenter_nodes, build_tasks, recall_made_objects, the engine's run of the task_classes' tasks,
    record_made_objects, made_control_plane_endpoint (a new API load balancer: addresses and the tasks again);
    for a render: recorded_names, boot_environment, karpenter_nodes, build_tasks, terraform_providers,
    store_objects and discovery_objects.
    """

    provider = None  # the spec's cloudProvider this driver serves
    targets = ("direct",)  # cluster_update's targets this cloud takes

    # --- what every cloud answers ---
    @abc.abstractmethod
    def cloud(self, cluster_name, region, profile=None, spec=None):
        """The client the tasks run against for a direct apply (and its check mode).  Receives the cluster's name,
        its region (the zones'), the modules' AWS profile option (ignored by other clouds) and the completed spec
        (cloud-specific fields: GCE's project).  Builds a client; makes no call.  A cloud without an API for this
        collection refuses with a NotBuilt naming the target it does take."""

    @abc.abstractmethod
    def task_classes(self):
        """The Task classes (engine/task.py) of this cloud's kinds: the engine finds by kind the objects a task list
        no longer holds (deletions of a direct run).  [] for a cloud with no objects of its own."""

    @abc.abstractmethod
    def build_tasks(self, completed, groups, ssh_public_keys, user_data, account_id=None):
        """{task key: Task} of the cluster's cloud objects, from the completed spec, the completed groups, the SSH
        public keys, {group name: user data} and the account (AWS's id, for ARNs; None elsewhere).  Pure: the
        model reads facts the driver gathered, never the cloud."""

    @abc.abstractmethod
    def boot_environment(self, completed):
        """{variable: value} exported to the boot script of every group's user data (the cloud's region,
        endpoints); {} when the nodes need nothing of the cloud.  Pure."""

    @abc.abstractmethod
    def control_plane_addresses(self, cloud, completed, wait=0):
        """The control plane's addresses workers pin its names to when the cluster has no DNS (kops' dns none):
        read from the cloud (the API load balancer's); [] when there is none yet or the cloud has none.  wait:
        seconds to wait for a load balancer just made to get its address.  Read-only (also in check mode)."""

    @abc.abstractmethod
    def terraform_providers(self, region, spec=None):
        """([(Terraform provider name, its block)], {name: required_providers entry}) rendered at the top of
        kubernetes.tf; ([], {}) for a cloud that does not render Terraform.  Pure."""

    # --- optional: what a cloud without the feature answers by default ---
    def choose_names(self, cloud, store, completed, dry_run):
        """Before a direct run: names the cloud picks once and the store records (AWS's IRSA bucket); returns the
        plan lines of what it will record.  dry_run: look only, record nothing.  Default: nothing to choose."""
        del cloud, store, completed, dry_run
        return []

    def recorded_names(self, store, completed):
        """Before a render: put the names choose_names recorded back into completed (a render asks no cloud).
        Default: nothing recorded."""
        del store, completed

    def made_control_plane_endpoint(self, plan, completed):
        """After a direct run that made changes: whether the plan created the API's load balancer, so that the
        pipeline reads its addresses and builds the user data again.  Default: False."""
        del plan, completed
        return False

    def discovery_objects(self, completed, documents, tasks, warn=None):
        """Render targets: the tasks publishing what the cluster's service-account issuer serves (AWS's OIDC
        discovery documents in a bucket).  Default: []."""
        del completed, documents, tasks, warn
        return []

    def store_objects(self, cluster_name, config_base, files, tasks):
        """Render targets: tasks writing the state store's files through the rendered template (kops'
        --target terraform with an s3:// store).  Default: []."""
        del cluster_name, config_base, files, tasks
        return []

    def karpenter_nodes(self, cloud_factory, completed, groups, user_data, warn):
        """What each Karpenter group's EC2NodeClass and NodePool take from the cloud's model (AWS only).
        cloud_factory() gives the cloud client (None when a render looks nothing up).  Default: None."""
        del cloud_factory, completed, groups, user_data, warn
        return None

    def account_id(self, cloud):
        """The cloud account the addons and the model name (AWS: the termination handler's queue URL, the
        service-account roles' ARNs), asked of cloud before the model is built; None where a cloud has none."""
        del cloud  # the drivers' common signature
        return None

    def recall_made_objects(self, cloud, store, tasks, dry_run):
        """Before a direct run: hand the cloud what the cluster's own record in the store says earlier runs made,
        where objects no query by tag finds are looked for (AWS's service-account IAM); a real run also records what
        its tasks ask for before anything is made (dry_run: the store is not written).  Returns what
        record_made_objects keeps after the run.  Default: None."""
        del cloud, store, tasks, dry_run
        return None

    def record_made_objects(self, store, recalled, dry_run):
        """After a direct run that succeeded: the cluster's record is what recall_made_objects returned (dry_run:
        nothing written).  Default: nothing."""
        del store, recalled, dry_run


class Provider(abc.ABC):
    """A cloud: kops' cloudProvider value and everything cloud-specific behind it.

    The attributes below are data the layers under providers/ read (provider_names.declared_value) instead of
    holding a table or a branch per cloud; each says who reads it.  Subclasses set what differs from the default.
    """

    name = None  # the spec's cloudProvider (the package's name)
    # {option: spec field} read from the completed spec into the reader's cloud() (GCE: its project).
    spec_options = {}
    # (regex whose group 1 is the region, an example zone) for a cloud zones.ZONE_PATTERNS does not hold.
    zone_pattern = None
    # --- what kops' create cluster gives a new cluster of this cloud (completion/) ---
    default_image = None  # the image when the channel has none for this cloud (kops' defaultImage)
    machine_types = True  # False: instance groups get no machineType (kops' defaultMachineType gives none)
    # {InstanceGroup role: machine type} when the cloud facts choose none (completion/cloudfacts.py); AWS chooses
    # by zone offering (cloud/aws_facts.py) and lists its candidates in machine_type_candidates instead.
    default_machine_types = {}
    # {architecture: {role: (machine type, ...)}} in kops' order of preference: the first offered in every zone of
    # the group wins (AWS's awsup DefaultInstanceType; without a lookup, the first).
    machine_type_candidates = {}
    # The completion builders of the cloud's own components (its cloud controller manager, CSI driver, ...), by their
    # names in completion/populate.CLOUD_BUILDERS.
    completion_builders = ()
    # The kubelet's --cloud-provider (completion/components/kubelet.py): an external cloud controller manager.
    kubelet_cloud_provider = "external"
    assigns_network_cidrs = True  # False: no networkCIDR nor subnet CIDRs (kops' PerformAssignments)
    # The URL scheme of the cloud's storage (s3://): a state store there guesses this cloud at create
    # (completion/new_cluster.py) and an asset repository there needs it (api/validation.py).  None: it has none.
    store_scheme = None
    # True: kops names the cloud by the label alpha.kops.k8s.io/cloud, not spec.cloudProvider (api/objects.py)
    named_by_label = False
    # --- what kops' validation accepts for this cloud (api/validation.py) ---
    dns_types = ("None",)  # spec.topology.dns.type values (kops: Public and Private need the cloud's DNS)
    root_volume_types = None  # the instance groups' spec.rootVolumeType values; None: not checked
    api_server_groups = False  # InstanceGroups of role APIServer (kops: AWS and GCE)
    karpenter = False  # InstanceGroups with manager Karpenter (kops: AWS)
    # --- the node side (nodeconfig/) ---
    # (bytes, what the limit is called) of the user data a machine takes; None: not checked (no user data).
    user_data_limit = None
    # True: control-plane nodes find etcd's peers and volume and keep api.internal through the cloud's API
    # (nodeconfig/bootstrap.py's boot variables name the cloud; providers/<cloud>/node.py answers).
    node_functions = False
    # True: the control plane runs the node labeller, which checks each node's identity in this cloud's API
    # (nodeconfig/node_labels.py, nodeup/node_labeller.py); elsewhere nodes keep their kubelet's labels.
    labels_nodes = False
    # ((spec.cloudConfig field, nodeup config key, only for groups that run an API server), ...): the cloudConfig
    # fields kops hands to this cloud's nodes (nodeconfig/config.py).
    cloud_config_fields = ()
    # The kubelet's image credential provider binary, {arch} to fill (nodeconfig/config.py's asset URLs); a cloud
    # with one also gets the nodeup config's kubeops.cloud section (provider, region) that nodeup/kubelet.py reads.
    credential_provider_url = None
    # True: the bootstrap service (kops-controller's) verifies a worker's instance identity in this cloud, and
    # workers get their credentials from it (nodeconfig/credentials.py); elsewhere they bootstrap with a token.
    verifies_node_identity = False
    # --- day 2 (rolling/) ---
    surges_by_default = False  # kops surges by default here (rollingupdate settings.go: AWS)

    # {verb: what to run instead}: said with the refusal of a verb this cloud does not build (metal's rolling update
    # is a playbook over the inventory's hosts, not a cloud's rolling side).
    instead_of = {}

    def _not_built(self, verb):
        instead = self.instead_of.get(verb)
        raise NotBuilt("spec.cloudProvider: %s is not built for %s clusters%s"
                       % (verb, self.name, "; %s" % instead if instead else ""))

    # --- what every cloud answers ---
    @abc.abstractmethod
    def driver(self):
        """The update driver (a Driver), for cluster_update and the cluster module's apply."""

    @abc.abstractmethod
    def reader(self):
        """The day-2 reader (a module or object answering ReaderPart): validate, kubeconfig, rolling update."""

    @abc.abstractmethod
    def inventory_hosts(self, plugin, service, cluster, groups, region):
        """[(host, variables, groups)] of the running cluster, for the kubeops.kops.kops inventory plugin (plugin: its
        options, get_option; service: the state store; cluster and groups: the completed specs).  Read-only; a
        CloudError names what went wrong."""

    # --- optional ---
    def rolling(self, cloud):
        """What rolling update replaces instances with (a RollingSide over the reader's cloud).  Default: refused."""
        del cloud
        self._not_built("rolling update")

    def check_region(self, region, completed):
        """Refuse a region option the cluster's zones contradict (kops derives the region from the zones)."""
        from ansible_collections.kubeops.kops.plugins.module_utils.api import validation_aws
        from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of
        validation_aws.check_region(region, region_of(completed["spec"]))


class ReaderPart(abc.ABC):
    """Provider.reader(): the running cluster's groups and the API's address, read-only.  Optional data:
    MACHINES_FROM_INVENTORY = True when cloud() takes hosts= (the inventory's machines, metal)."""

    @abc.abstractmethod
    def cloud(self, cluster_name, region, profile=None, **spec_options):
        """The cluster's view the lookups run on (spec_options: Provider.spec_options read from the spec)."""

    @abc.abstractmethod
    def cloud_groups(self, cloud):
        """{cloud group name: {"name", "group_name", "desired", "min", "max", "instances": [{"id", "name",
        "private_dns_name", "detached", "warm", "needs_update"}]}}: validate and rolling update compare them with
        the instance groups and the Kubernetes nodes."""

    @abc.abstractmethod
    def api_endpoint(self, cloud):
        """The API's address (its load balancer's, or the address the user gave), None when there is none yet."""


class RollingSide(abc.ABC):
    """Provider.rolling(cloud): the cloud side of rolling/roller.py.  Data: provider (the cloud's name, read by the
    planner for Provider.surges_by_default).  Check mode never reaches it (rolling_update plans only)."""

    @abc.abstractmethod
    def cloud_groups(self):
        """As ReaderPart.cloud_groups, with what the planner needs to tell members needing an update."""

    @abc.abstractmethod
    def detach(self, group, instance):
        """Take instance out of group so that a replacement comes up beside it (surge)."""

    @abc.abstractmethod
    def deregister(self, group, instance):
        """Take instance out of the group's load balancers before it is drained."""

    @abc.abstractmethod
    def terminate(self, group, instance):
        """Delete instance (the group replaces it unless it was detached)."""

    @abc.abstractmethod
    def wait_in_service(self, group, timeout):
        """Wait up to timeout seconds for the group to have its desired instances in service; whether it did."""


class DeletionPart(abc.ABC):
    """<cloud>/deletion.py: delete cluster.  Data: KINDS_BY_NAME ({kind: Kind with find, delete, after}: the
    walker deletes the kinds in their order).  Optional functions: rediscover(cloud, spec, handled) (look again for
    the kinds that can appear after a pass), left_behind(spec) (notes on what the user keeps)."""

    @abc.abstractmethod
    def cloud(self, cluster_name, region, profile=None, spec=None):
        """A DeletionCloud for the cluster; builds a client, makes no call."""

    @abc.abstractmethod
    def discover(self, cloud, spec):
        """[deletion_base.Resource] the cluster owns (by its own tags, labels or names) or shares (untagged only).
        Read-only: the walker reports it as the plan in check mode."""

    @abc.abstractmethod
    def any_owned(self, cloud):
        """The first object the cluster still owns (one cheap lookup), or None: the cluster module refuses to forget
        a cluster whose objects are still there."""


class DeletionCloud(abc.ABC):
    """What DeletionPart.cloud returns, as the walker uses it."""

    @abc.abstractmethod
    def failure(self, exc):
        """One line saying what exc (a call that failed) means."""


class OptionsPart(abc.ABC):
    """<cloud>/options.py.  Optional: cloud_error(exc) (this cloud library's error as a KopsError, else None)."""

    @abc.abstractmethod
    def argument_spec(self):
        """The options every kubeops.kops module takes for this cloud."""

    @abc.abstractmethod
    def configure_module(self, module):
        """Apply those options (credentials, endpoints) before the module runs."""

    @abc.abstractmethod
    def cloud_facts(self, params, data, zone_hint):
        """The cloud facts completion looks up for a zone of this cloud, or None when zone_hint is not its own."""


class NodePart(abc.ABC):
    """<cloud>/node.py: the node modules, run on a control-plane node (providers/node.py).  A cloud may define some
    of etcd_volume(module), etcd_peers(module), api_dns(module) only: the node module refuses the others in one
    line.  A cloud with node_functions true defines all three."""

    @abc.abstractmethod
    def etcd_volume(self, module):
        """Find and attach the node's etcd volume (check mode: report, attach nothing)."""

    @abc.abstractmethod
    def etcd_peers(self, module):
        """The etcd members' addresses, from the cloud's API."""

    @abc.abstractmethod
    def api_dns(self, module):
        """Keep api.internal pointing at the control plane (check mode: report, change nothing)."""
