# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""State-store files as Terraform aws_s3_object resources (kops' ManagedFile, Terraform target).

With target=terraform kops does not write the managed files itself: `terraform
apply` does, so the nodes' configs change with the launch templates that pin
their hashes.  The content goes to data/aws_s3_object_<name>_content beside
kubernetes.tf, referred to with file().  Direct apply never sees these tasks:
it writes the same files to the store in one all-or-nothing write.
CloudFormation has no resource for an S3 object, so there they are written
directly too (render_cloudformation returns nothing).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Expression
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Field, Task
from ansible_collections.kubeops.kops.plugins.module_utils.errors import TaskError


class S3Object(Task):
    """fields: bucket, key, content (bytes, written to data/ and read with file()) and acl (public-read for the
    IRSA discovery documents).  kops writes the files through the aws.files provider, encrypted with AES256."""

    kind = "aws_s3_object"
    FIELDS = (
        Field("bucket"),
        Field("key"),
        Field("content"),
        Field("acl"),
    )

    def data_file(self):
        return "data/aws_s3_object_%s_content" % self.name

    def render_terraform(self):
        body = Task.render_terraform(self)
        body.update(content=Expression('file("${path.module}/%s")' % self.data_file()), provider=Expression("aws.files"),
                    server_side_encryption="AES256")
        return body

    def terraform_files(self):
        return [(self.data_file(), self.fields["content"])]

    def render_cloudformation(self):
        return None

    def find(self, cloud):
        raise TaskError("%s: state-store files are written by the store, not reconciled as cloud objects"
                        % self.key)
