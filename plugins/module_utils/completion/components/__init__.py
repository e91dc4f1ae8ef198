# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops' options builders (pkg/model/components), one module per component.

Each module has ``build(spec, ctx)``: it fills the fields of the completed
cluster spec (v1alpha2 wire shape) that the user left empty.  The order they
run in is ``populate.BUILDERS``.
"""

from __future__ import annotations
