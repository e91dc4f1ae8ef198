# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The nodeup config: what a node of each instance group is handed (docs/nodeup-config.md)."""
