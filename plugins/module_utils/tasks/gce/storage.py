# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""State-store files as Terraform google_storage_bucket_object resources (a gs:// store).

As with aws_s3_object on an s3:// store, `terraform apply` writes them; direct apply never
sees these tasks (it writes the same files to the store itself).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Expression
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Field, Task
from ansible_collections.kubeops.kops.plugins.module_utils.errors import TaskError


class StorageObject(Task):
    """fields: bucket, name (the object's key) and content (bytes, written to data/ and read with file())."""

    kind = "google_storage_bucket_object"
    FIELDS = (
        Field("bucket"),
        Field("name"),
        Field("content"),
    )

    def __init__(self, task_name, /, bucket, key, content):
        Task.__init__(self, task_name, bucket=bucket, name=key, content=content)

    def data_file(self):
        return "data/%s_%s_content" % (self.kind, self.name)

    def render_terraform(self):
        body = Task.render_terraform(self)
        body["content"] = Expression('file("${path.module}/%s")' % self.data_file())
        return body

    def terraform_files(self):
        return [(self.data_file(), self.fields["content"])]

    def find(self, cloud):
        raise TaskError("%s: state-store files are written by the store, not reconciled as cloud objects" % self.key)
