# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The controller side of the nodes (kops' cloudup side: pkg/nodemodel, bootstrapscript.go): the nodeup config each
instance group's nodes are handed (docs/nodeup-config.md), the boot script and its pinned artefacts, and what
`update cluster` writes to the store for the nodes.  Never runs on a node; what does is nodeup/."""
