# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Generated tables of nodeup/, data only: written by hack/gen_flag_data.py (flag_data.py), hack/gen_k8s_rules.py
(component_rules_data.py) and hack/gen_containerd_license.py (containerd_license.py) from kops' (or the components')
source, never edited by hand; each has a drift test that fails when it differs from what its generator writes
(docs/data-tables.md).  The code that reads them is the hand-written nodeup/ beside this package; a generated file
imports nothing (tests/unit/engine/test_layers.py)."""
