# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The addons, as kops renders them: the bootstrap channel and its manifests (docs/addons.md)."""
