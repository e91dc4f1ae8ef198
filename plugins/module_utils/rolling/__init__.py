# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops rolling-update cluster (pkg/instancegroups/).

planner.py decides (which groups and instances, in which order, how many at once), roller.py
runs the loop, drain.py is the Kubernetes side (cordon, drain by eviction), aws.py the cloud
side (autoscaling groups), progress.py the log a user watches.  Only aws.py knows a cloud.
"""
