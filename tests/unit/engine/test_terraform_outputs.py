"""kubernetes.tf's outputs are the tasks' own (Task.terraform_outputs), merged as kops' TerraformWriter merges
them: a scalar once, an array gathered from every task, deduplicated and sorted by its written text."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.engine import terraform
from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Expression
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Task


class Output(Task):
    kind = "test_object"

    def __init__(self, task_name, outputs):
        Task.__init__(self, task_name)
        self.written = outputs

    def terraform_outputs(self):
        return self.written


def test_arrays_gather_every_task_deduplicated_and_sorted_by_text():
    tasks = [Output("b", [("node_security_group_ids", Expression("aws_security_group.nodes.id"), True),
                          ("node.subnet/ids", Expression("aws_subnet.b.id"), True)]),
             Output("a", [("node_security_group_ids", "sg-extra", True),
                          ("node_security_group_ids", Expression("aws_security_group.nodes.id"), True),
                          ("node.subnet/ids", Expression("aws_subnet.a.id"), True),
                          ("vpc_id", Expression("aws_vpc.x.id"), False)])]
    outputs = terraform.output_variables(tasks, {"cluster_name": "c.example.com"})
    # A literal id ("sg-...) sorts before a reference, as kops' SortLiterals on the written text; names are
    # sanitized like kops' (. and / in a name).
    assert outputs == {"cluster_name": "c.example.com", "vpc_id": "aws_vpc.x.id",
                       "node_security_group_ids": ["sg-extra", "aws_security_group.nodes.id"],
                       "node-subnet--ids": ["aws_subnet.a.id", "aws_subnet.b.id"]}
    text = terraform.render(tasks, ([], {}), {"cluster_name": "c.example.com"})
    assert 'node_security_group_ids = ["sg-extra", aws_security_group.nodes.id]' in text
    assert 'output "vpc_id" {\n  value = aws_vpc.x.id\n}' in text


@pytest.mark.parametrize("second", [("vpc_id", "vpc-2", False), ("vpc_id", "vpc-2", True)])
def test_an_output_written_twice_or_as_scalar_and_array_is_an_error(second):
    tasks = [Output("a", [("vpc_id", "vpc-1", False)]), Output("b", [second])]
    with pytest.raises(ValueError, match="Terraform output vpc_id: written twice.*test_object/b"):
        terraform.output_variables(tasks)
    with pytest.raises(ValueError, match="written twice"):
        terraform.output_variables(list(reversed(tasks)))


def test_no_outputs_no_locals():
    assert "locals" not in terraform.render([Output("a", [])], ([], {}))
