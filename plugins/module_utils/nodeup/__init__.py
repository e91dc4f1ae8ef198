# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The node side (kops' nodeup and protokube): what runs on a node from its nodeup config, through the node
modules, roles/nodeup, roles/protokube and the boot script.  Imports nothing from nodeconfig/, the controller
side that builds that config (tests/unit/nodeup/test_node_side.py)."""
