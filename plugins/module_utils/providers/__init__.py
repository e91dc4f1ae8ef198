# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The clouds: one package per cloud (providers/<cloud>/provider.py defines its PROVIDER), the registry that maps
cloudProvider to it (registry.py).  Empty, so that a module importing one part of a cloud does not ship them all."""
