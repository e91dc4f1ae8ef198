"""A Cluster for a cloud kops runs and kubeops.kops does not build gets one line naming the cloud (never a
traceback: an Azure v1alpha3 spec, whose cloudProvider is a mapping, used to fail with TypeError)."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.api import errors, objects, validation

AZURE_V1ALPHA3 = """
apiVersion: kops.k8s.io/v1alpha3
kind: Cluster
metadata:
  name: minimal-azure.example.com
spec:
  cloudProvider:
    azure:
      resourceGroupName: rg
  kubernetesVersion: v1.34.0
"""


@pytest.mark.parametrize("cloud", ["azure", "hetzner", "openstack", "scaleway", "digitalocean"])
def test_a_cloud_kops_runs_and_we_do_not_build_is_named_in_one_line(cloud):
    text = "apiVersion: kops.k8s.io/v1alpha2\nkind: Cluster\nmetadata:\n  name: a.example.com\nspec:\n" \
           "  cloudProvider: %s\n  bogusField: 1\n" % cloud
    with pytest.raises(errors.ValidationError) as raised:
        objects.load_objects(text, source="definition")
    message = str(raised.value)
    assert "\n" not in message and '"%s"' % cloud in message and "spec.cloudProvider" in message
    assert "bogusField" not in message  # the cloud is the reason, before any field check


def test_azure_v1alpha3_mapping_is_named_not_a_type_error():
    with pytest.raises(errors.ValidationError) as raised:
        objects.load_objects(AZURE_V1ALPHA3, source="definition")
    assert str(raised.value).startswith('spec.cloudProvider: Unsupported value: "azure"')
    with pytest.raises(errors.ValidationError) as raised:
        validation.validate_cluster({"metadata": {"name": "a.example.com"},
                                     "spec": {"cloudProvider": {"azure": {}}, "kubernetesVersion": "1.34.0"}})
    assert '"azure"' in str(raised.value)


def test_a_mapping_naming_no_cloud_is_a_field_error():
    with pytest.raises(errors.ValidationError) as raised:
        validation.validate_cluster({"metadata": {"name": "a.example.com"},
                                     "spec": {"cloudProvider": {"nimbus": {}}, "kubernetesVersion": "1.34.0"}})
    assert "spec.cloudProvider: Invalid value" in str(raised.value)
