# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Generated tables of addons/, data only: written by hack/gen_crds.py (the CustomResourceDefinitions, *_crds.py),
hack/gen_addon_images.py (image_data.py) and hack/gen_nvidia_data.py (nvidia_data.py) from kops' (or the
components') source, never edited by hand; each has a drift test that fails when it differs from what its generator
writes (docs/data-tables.md).  The code that reads them is the hand-written addons/ beside this package; a generated
file imports nothing (tests/unit/engine/test_layers.py)."""
