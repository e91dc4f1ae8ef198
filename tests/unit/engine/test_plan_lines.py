"""The plan as the user reads it (kops update cluster without --yes): values, order, a short new-cluster preview."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.engine import plan
from ansible_collections.kubeops.kops.plugins.module_utils.engine.runner import PlanEntry

USER_DATA_BEFORE = "#!/bin/bash\n" + "echo before\n" * 40
USER_DATA_AFTER = "#!/bin/bash\n" + "echo after\n" * 40


def test_a_changed_field_shows_old_and_new_values_and_long_ones_as_their_hash():
    entries = [PlanEntry("aws_launch_template", "nodes.k.example.com", "update",
                         {"instance_type": ("t3.medium", "t3.large"), "user_data": (USER_DATA_BEFORE, USER_DATA_AFTER),
                          "tags": ({"a": "1"}, {"a": "2"})})]
    lines = plan.lines(entries)
    assert lines[:4] == ["~ aws_launch_template nodes.k.example.com",
                         "    instance_type: t3.medium -> t3.large",
                         '    tags: {"a": "1"} -> {"a": "2"}',
                         "    user_data: %s -> %s" % (plan.summarise(USER_DATA_BEFORE), plan.summarise(USER_DATA_AFTER))]
    assert plan.summarise(USER_DATA_AFTER).startswith("<sha256 ") and USER_DATA_AFTER not in "\n".join(lines)
    assert lines[-2:] == ["Plan: 0 to create, 1 to update, 0 to delete, 0 unchanged.", plan.RESTART_HINT]
    assert "echo after" in "\n".join(plan.lines(entries, verbosity=plan.FULL_VALUES))  # -vv: the whole value


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
