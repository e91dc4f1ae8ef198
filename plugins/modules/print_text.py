#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

# The documentation of the print_text action (plugins/action/print_text.py): the action runs on the controller and
# no module code is ever sent to a host; this file is what ansible-doc and ansible-test read.

from __future__ import annotations

DOCUMENTATION = r"""
module: print_text
short_description: Print text on the controller's output as it is
version_added: 0.1.0
description:
  - Prints O(text) to the controller's standard output, line for line, whatever the stdout callback and its
    result format. M(ansible.builtin.debug) goes through the callback, which (Ansible's default result format)
    prints a multi-line string as one JSON-escaped line; this action does not.
  - The playbooks use it to show YAML, for example C(playbooks/get_cluster.yml) without C(output) prints the
    cluster's YAML as C(kops get cluster -o yaml) does.
  - An action that runs on the controller only; it never connects to a host.
options:
  text:
    description:
      - What to print. A trailing newline is dropped (the output ends each line itself).
    type: str
    required: true
attributes:
  check_mode:
    description: Printing changes nothing; the text is printed in check mode too.
    support: full
  diff_mode:
    description: Nothing changes, so there is nothing to diff.
    support: none
  action:
    description: Runs on the controller as an action plugin.
    support: full
notes:
  - The task is never C(changed).
  - Text that is not a string (a list, a mapping) fails naming its type; format it first, for example with
    P(ansible.builtin.to_nice_yaml#filter).
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Print a cluster's YAML, like `kops get cluster k8s.example.com -o yaml`
  kubeops.kops.print_text:
    text: "{{ kops_cluster.yaml }}"

- name: Print a table
  kubeops.kops.print_text:
    text: |
      NAME              ROLE           MACHINETYPE
      control-plane-a   ControlPlane   t3.medium
"""

RETURN = r"""
changed:
  description: Always false; printing changes nothing.
  returned: always
  type: bool
  sample: false
"""
