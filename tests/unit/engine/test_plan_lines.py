"""The plan as the user reads it (kops update cluster without --yes): values, order, a short new-cluster preview."""

from __future__ import annotations

import base64

from ansible_collections.kubeops.kops.plugins.module_utils.engine import plan
from ansible_collections.kubeops.kops.plugins.module_utils.engine.runner import PlanEntry


def test_a_changed_field_shows_old_and_new_values_long_ones_as_their_hash_and_documents_as_their_diff():
    policy = {"Statement": [{"Action": "ec2:*", "Resource": "*", "Effect": "Allow"}] * 3}
    user_data = ("#!/bin/bash\nCLUSTER=k\nHASH=%s\nexport AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENG\necho done\n")
    before, after = (base64.b64encode((user_data % h).encode()).decode() for h in ("aaa", "bbb"))
    entries = [PlanEntry("aws_launch_template", "nodes.k.example.com", "update",
                         {"instance_type": ("t3.medium", "t3.large"), "user_data": (before, after),
                          "tags": ({"a": "1"}, {"a": "2"}), "policy": (policy, dict(policy, Version="2012-10-17"))},
                         restarts=True)]
    lines = plan.lines(entries)
    assert lines[:4] == ["~ aws_launch_template nodes.k.example.com",
                         "    instance_type: t3.medium -> t3.large",
                         "    policy: %s -> %s" % (plan.summarise(policy), plan.summarise(dict(policy, Version="2012-10-17"))),
                         '    tags: {"a": "1"} -> {"a": "2"}']
    assert plan.summarise(policy).startswith("<sha256 ")
    # User data (base64, as the launch template holds it): its text's diff, the secret masked.
    assert lines[4:11] == ["    user_data:", "      @@ -1,5 +1,5 @@", "       #!/bin/bash", "       CLUSTER=k", "      -HASH=aaa",
                           "      +HASH=bbb", "       export AWS_SECRET_ACCESS_KEY=<masked>"]
    assert "wJalr" not in "\n".join(lines + plan.lines(entries, verbosity=plan.FULL_VALUES))
    assert lines[-2:] == ["Plan: 0 to create, 1 to update, 0 to delete, 0 unchanged.", plan.RESTART_HINT]
    full = plan.entry_for_user(entries[0], verbosity=plan.FULL_VALUES)["changes"]["user_data"]["after"]
    assert full == (user_data % "bbb").replace("wJalrXUtnFEMIK7MDENG", "<masked>")  # -vv: the whole text, masked


def test_documents_show_after_the_updates_new_ones_by_name_changed_ones_by_diff():
    documents = [("nodeup_config", "nodes-a", "KubeletConfig:\n  logLevel: 2\n", "KubeletConfig:\n  logLevel: 2\n"
                  "  maxPods: 42\n"), ("nodeup_config", "nodes-b", None, "x: 1\n")]
    lines = plan.lines([PlanEntry("aws_vpc", "v", "unchanged")], documents=documents)
    assert lines == ["+ nodeup_config (1): nodes-b", "~ nodeup_config nodes-a", "    @@ -1,2 +1,3 @@",
                     "     KubeletConfig:", "       logLevel: 2", "    +  maxPods: 42",
                     "Plan: 0 to create, 0 to update, 0 to delete, 1 unchanged."]
    assert plan.documents_for_user(documents)[0] == {"kind": "nodeup_config", "name": "nodes-a", "action": "update",
                                                     "diff": [line[4:] for line in lines[2:6]]}


def test_deletions_come_first_and_creates_are_grouped_by_kind():
    entries = [PlanEntry("aws_subnet", "a", "create"), PlanEntry("aws_vpc", "k.example.com", "create"),
               PlanEntry("aws_subnet", "b", "create"), PlanEntry("aws_security_group_rule", "ssh", "update",
                                                                 {"cidr": ("0.0.0.0/0", None)}),
               PlanEntry("aws_autoscaling_group", "old", "delete", object_id="old-asg"),
               PlanEntry("aws_vpc", "same", "unchanged")]
    assert plan.lines(entries) == [
        "- aws_autoscaling_group old (old-asg)",
        "+ aws_subnet (2): a, b",
        "+ aws_vpc (1): k.example.com",
        "~ aws_security_group_rule ssh",
        "    cidr: 0.0.0.0/0 -> (none)",
        "Plan: 3 to create, 1 to update, 1 to delete, 1 unchanged."]
    assert plan.lines(entries, verbosity=1)[1:4] == ["+ aws_subnet a", "+ aws_subnet b", "+ aws_vpc k.example.com"]


def test_what_the_cluster_uses_without_owning_it_is_named_so_the_count_says_what_is_unchanged():
    entries = [PlanEntry("aws_vpc", "k.example.com", "create"), PlanEntry("aws_ami", "ami-1", "unchanged", shared=True),
               PlanEntry("aws_subnet", "owned", "unchanged")]
    assert plan.lines(entries) == [
        "+ aws_vpc (1): k.example.com",
        "= aws_ami (1, used, not owned): ami-1",
        "Plan: 1 to create, 0 to update, 0 to delete, 2 unchanged."]
    assert plan.lines(entries, verbosity=1)[1] == "= aws_ami ami-1 (used, not owned)"


def test_nothing_to_do_is_said_in_kops_words():
    entries = [PlanEntry("aws_vpc", "k.example.com", "unchanged"), PlanEntry("aws_ami", "ami-1", "unchanged", shared=True)]
    assert plan.lines(entries) == [plan.NO_CHANGES, "Plan: 0 to create, 0 to update, 0 to delete, 2 unchanged."]
    assert plan.NO_CHANGES == "No changes need to be applied"


def test_the_restart_hint_follows_the_kinds_that_restart_instances_not_a_table_of_cloud_kinds():
    from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws.autoscaling import LaunchTemplate
    from ansible_collections.kubeops.kops.plugins.module_utils.tasks.gce.compute import InstanceTemplate

    assert LaunchTemplate.restarts_instances and InstanceTemplate.restarts_instances
    changed = {"x": (1, 2)}
    assert plan.RESTART_HINT not in plan.lines([PlanEntry("aws_launch_template", "n", "update", changed)])
    assert plan.RESTART_HINT not in plan.lines([PlanEntry("toy_pool", "n", "create", changed, restarts=True)])
    assert plan.lines([PlanEntry("toy_pool", "n", "update", changed, restarts=True)])[-1] == plan.RESTART_HINT
