# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The Kubernetes API side of the day-2 verbs: admin credentials and kubeconfigs from the
keystore (credentials.py), an API client over the `kubernetes` Python client (client.py),
and kops' cluster validation on plain data (validation.py)."""
