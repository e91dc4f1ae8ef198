"""Run a kubeops.kops module in its own process, the way Ansible does, with one test-only hook.

ARGS_JSON is {"module": "cluster", "args": {module arguments}}.

    python -m tests.unit.statestore.racing ARGS_JSON race BARRIER_DIR PARTIES
        the module plans, then waits until PARTIES processes have planned (files in
        BARRIER_DIR) before it executes: every racer has read the same cluster.
    python -m tests.unit.statestore.racing ARGS_JSON kill-after K
        the process SIGKILLs itself just before the store write after the first K
        (the lease not counted): a run cut off in the middle of its write.

The module's result (its JSON) goes to stdout, as under Ansible.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import time


def _race(barrier, parties):
    from ansible_collections.kubeops.kops.plugins.module_utils import clusters
    real_execute = clusters.ClusterService.execute

    def execute_after_everyone_planned(service, plan):
        open(os.path.join(barrier, str(os.getpid())), "w").close()
        deadline = time.monotonic() + 60
        while len(os.listdir(barrier)) < parties and time.monotonic() < deadline:
            time.sleep(0.02)
        return real_execute(service, plan)

    clusters.ClusterService.execute = execute_after_everyone_planned


def _kill_after(writes):
    from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs
    real_write = vfs.Store.write
    done = []

    def write_then_die(store, relpath, data, expect=vfs.OBSERVED):
        if not relpath.endswith("/" + layout.LEASE):
            if len(done) == writes:
                os.kill(os.getpid(), signal.SIGKILL)
            done.append(relpath)
        return real_write(store, relpath, data, expect)

    vfs.Store.write = write_then_die


def main():
    from ansible.module_utils.testing import patch_module_args
    args_file, mode = sys.argv[1], sys.argv[2]
    with open(args_file) as handle:
        request = json.load(handle)
    if mode == "race":
        _race(sys.argv[3], int(sys.argv[4]))
    else:
        _kill_after(int(sys.argv[3]))
    module = importlib.import_module("ansible_collections.kubeops.kops.plugins.modules." + request["module"])
    with patch_module_args(request["args"]):
        module.main()


if __name__ == "__main__":
    main()
