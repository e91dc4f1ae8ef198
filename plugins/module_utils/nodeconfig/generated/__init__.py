# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Generated tables of nodeconfig/, data only: written by hack/gen_asset_data.py (asset_data.py) from kops' (or the
components') source, never edited by hand; each has a drift test that fails when it differs from what its generator
writes (docs/data-tables.md).  The code that reads them is the hand-written nodeconfig/ beside this package; a
generated file imports nothing (tests/unit/engine/test_layers.py)."""
