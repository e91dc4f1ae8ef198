# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops' names, tags and labels of each cloud's objects (aws.py, gce.py): leaves every layer may read (the model,
the tasks, the addons, the node configs, deletion) with no layer above them, so that reading a name imports no task."""
