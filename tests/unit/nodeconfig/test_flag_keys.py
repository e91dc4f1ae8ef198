"""Component fields a user sets in a v1alpha2 spec reach the static pods as kops' flags.

flag_data.py was once keyed by kops' internal field names; v1alpha2 spells some
of them differently (concurrentRcSyncs, not concurrentRCSyncs), so a spec that
set them loaded fine and the flag silently never appeared.  Each case below
goes the user's way: spec text -> strict load -> completion -> nodeup config ->
static pod arguments.
"""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import errors, objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import populate
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import manifests
from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore

from tests.conformance import kops_fixtures
from tests.unit.completion.test_populate import _cloud

KAPI = "/srv/kubernetes/kube-apiserver"
CONTROL_PLANE_GROUP = "master-us-test-1a"
# (spec section, v1alpha2 field, value, the flags kops' nodeup writes for it, pod)
CASES = [
    ("kubeAPIServer", "authorizationRbacSuperUser", "admin",
     ["--authorization-rbac-super-user=admin"], "kube-apiserver"),
    ("kubeAPIServer", "authorizationWebhookCacheAuthorizedTtl", "5m",
     ["--authorization-webhook-cache-authorized-ttl=5m0s"], "kube-apiserver"),
    ("kubeAPIServer", "authorizationWebhookCacheUnauthorizedTtl", "30s",
     ["--authorization-webhook-cache-unauthorized-ttl=30s"], "kube-apiserver"),
    ("kubeControllerManager", "concurrentRcSyncs", 7,
     ["--concurrent-rc-syncs=7"], "kube-controller-manager"),
    ("kubeProxy", "ipvsExcludeCidrs", ["10.0.0.0/8", "192.168.0.0/16"],
     ["--ipvs-exclude-cidrs=10.0.0.0/8,192.168.0.0/16"], "kube-proxy"),
    # v1alpha2's OIDC fields (kops moves them to spec.authentication.oidc and its
    # nodeup writes them back as these flags; required claims sorted).
    ("kubeAPIServer", "oidcIssuerURL", "https://issuer.example.com",
     ["--oidc-issuer-url=https://issuer.example.com"], "kube-apiserver"),
    ("kubeAPIServer", "oidcClientID", "kubernetes", ["--oidc-client-id=kubernetes"], "kube-apiserver"),
    ("kubeAPIServer", "oidcUsernameClaim", "email", ["--oidc-username-claim=email"], "kube-apiserver"),
    ("kubeAPIServer", "oidcUsernamePrefix", "oidc:", ["--oidc-username-prefix=oidc:"], "kube-apiserver"),
    ("kubeAPIServer", "oidcGroupsClaim", "groups", ["--oidc-groups-claim=groups"], "kube-apiserver"),
    ("kubeAPIServer", "oidcGroupsPrefix", "oidc:", ["--oidc-groups-prefix=oidc:"], "kube-apiserver"),
    ("kubeAPIServer", "oidcRequiredClaim", ["hd=example.com", "aud=kubernetes"],
     ["--oidc-required-claim=aud=kubernetes", "--oidc-required-claim=hd=example.com"], "kube-apiserver"),
]


def _user_spec(section, field, value):
    """minimal-aws's v1alpha2 input as YAML text, with one component field set."""
    documents = [d for d in yaml.safe_load_all(
        (kops_fixtures.UPDATE_CLUSTER / "minimal-aws" / "in-v1alpha2.yaml").read_text()) if d]
    cluster = next(d for d in documents if d["kind"] == "Cluster")
    cluster["spec"].setdefault(section, {})[field] = value
    return yaml.safe_dump_all(documents)


def _static_pods(text):
    cluster, groups = objects.split_objects(objects.load_objects(text, "spec.yaml"))
    completed = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))
    group = populate.populate_instance_group_spec(
        completed, next(g for g in groups if objects.name_of(g) == CONTROL_PLANE_GROUP))
    keysets = {name: keystore.new_keyset(name) for name in keystore.keyset_names(completed)}
    return manifests.static_pods(config.build_config(completed, group, keysets, completed["spec"]["configBase"]))


def _args(pod):
    return pod["spec"]["containers"][0]["args"]


@pytest.mark.parametrize("section, field, value, flags, pod", CASES, ids=[c[1] for c in CASES])
def test_spec_field_reaches_the_static_pod(section, field, value, flags, pod):
    baseline = _args(_static_pods(_user_spec(section, field, None))[pod])
    args = _args(_static_pods(_user_spec(section, field, value))[pod])
    flag_names = {flag.split("=", 1)[0] for flag in flags}
    assert not [arg for arg in baseline if arg.split("=", 1)[0] in flag_names]
    assert [arg for arg in args if arg.split("=", 1)[0] in flag_names] == flags


@pytest.mark.parametrize("section, internal_name, v1alpha2_name", [
    ("kubeAPIServer", "authorizationWebhookCacheAuthorizedTTL", "authorizationWebhookCacheAuthorizedTtl"),
    ("kubeControllerManager", "concurrentRCSyncs", "concurrentRcSyncs"),
    ("kubeProxy", "ipvsExcludeCIDRs", "ipvsExcludeCidrs"),
])
def test_the_internal_spelling_is_refused_naming_the_v1alpha2_one(section, internal_name, v1alpha2_name):
    with pytest.raises(errors.ValidationError) as caught:
        objects.load_objects(_user_spec(section, internal_name, "1"), "spec.yaml")
    assert 'v1alpha2 calls it "%s"' % v1alpha2_name in str(caught.value)


def test_nodeup_keeps_its_own_etcd_ca_path():
    """kops' nodeup overwrites etcdCaFile with its own file; a spec value does not move it."""
    args = _args(_static_pods(_user_spec("kubeAPIServer", "etcdCaFile", "/elsewhere/ca.crt"))["kube-apiserver"])
    assert [arg for arg in args if arg.startswith("--etcd-cafile=")] == ["--etcd-cafile=%s/etcd-ca.crt" % KAPI]
