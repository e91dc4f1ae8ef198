"""kops' tables (util/pkg/tables.Render): header, rows sorted column by column, Go's tabwriter spacing."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import tables


def test_columns_end_at_the_tab_stop_past_the_widest_cell_plus_one():
    # kops writes NAME\tCLOUD\tZONES through tabwriter(minwidth 0, tabwidth 8, padding 1, '\t'): a column whose
    # widest cell is 7 wide ends at 8, one 8 wide at 16 (the padding needs a place), as `expandtabs` shows tabs.
    assert tables.render(["NAME", "CLOUD", "ZONES"], [["k8s.exa", "aws", "eu-west-1a"]]) == [
        "NAME    CLOUD   ZONES", "k8s.exa aws     eu-west-1a"]
    assert tables.render(["NAME", "CLOUD", "ZONES"], [["k8s.exam", "gce", "us-test1-a"]]) == [
        "NAME\t\tCLOUD\tZONES".expandtabs(8), "k8s.exam\tgce\tus-test1-a".expandtabs(8)]


def test_rows_are_sorted_as_kops_sorts_them_and_unset_numbers_show_as_a_dash():
    rows = [["nodes-b", "Node", "t3.medium", 2, None], ["control-plane-a", "ControlPlane", "t3.large", 1, 1],
            ["nodes-a", "Node", "t3.medium", 10, 10]]
    assert tables.render(["NAME", "ROLE", "MACHINETYPE", "MIN", "MAX"], rows) == [
        "NAME            ROLE            MACHINETYPE     MIN     MAX",
        "control-plane-a ControlPlane    t3.large        1       1",
        "nodes-a         Node            t3.medium       10      10",
        "nodes-b         Node            t3.medium       2       -"]


def test_unsorted_keeps_the_order_and_no_line_ends_in_spaces():
    lines = tables.render(["REVISION", "CAUSE"], [[2, ""], [10, "replace"]], sort=False)
    assert lines == ["REVISION        CAUSE", "2", "10              replace"]
    assert tables.render(["TYPE", "NAME", "ID"], []) == ["TYPE    NAME    ID"]


def test_validate_prints_kops_tables():
    from ansible_collections.kubeops.kops.plugins.module_utils.kube import validation

    groups = [{"metadata": {"name": "nodes-us-east-1a"},
               "spec": {"role": "Node", "machineType": "t3.medium", "minSize": 1, "maxSize": 2,
                        "subnets": ["us-east-1a"]}},
              {"metadata": {"name": "control-plane-us-east-1a"},
               "spec": {"role": "Master", "machineType": "t3.large", "subnets": ["us-east-1a"]}}]
    result = {"nodes": [{"name": "i-2", "role": "node", "status": "True"},
                        {"name": "i-1", "role": "control-plane", "status": "True"}],
              "failures": [{"type": "Node", "name": "i-2", "message": "node \"i-2\" is not ready"}]}
    assert validation.report("k.example.com", groups, result) == [
        "Validating cluster k.example.com", "", "INSTANCE GROUPS",
        "NAME                            ROLE            MACHINETYPE     MIN     MAX     SUBNETS",
        "control-plane-us-east-1a        ControlPlane    t3.large        -       -       us-east-1a",
        "nodes-us-east-1a                Node            t3.medium       1       2       us-east-1a",
        "", "NODE STATUS",
        "NAME    ROLE            READY",
        "i-1     control-plane   True",
        "i-2     node            True",
        "", "VALIDATION ERRORS",
        "KIND    NAME    MESSAGE",
        "Node    i-2     node \"i-2\" is not ready",
        "", "Validation Failed"]
