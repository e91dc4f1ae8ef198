# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""AWS: its Provider is provider.PROVIDER (providers/registry.py).  Empty, so that a module importing one part
(node.py on a node) does not ship the others with it."""
