# kubeops.kops developer entry points.  Everything runs from a local .venv built
# from requirements*.txt, so a fresh machine needs only python3.11, pip and apt.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
COLL   := build/collections
# The collection is used in place through a symlink, the same tree
# `ansible-galaxy collection install` would produce.
COLL_LINK := $(COLL)/ansible_collections/kubeops/kops
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/$(COLL)
export PYTHONPATH := $(CURDIR)/$(COLL)
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
DEMO_STORE ?= file://$(CURDIR)/out/state
# The nodes' pinned boot wheels, downloaded once at install time (hack/boot_wheels.py): cluster_update
# uploads them to the state store, and neither the demo nor the tests reach an index for them.
BOOT_WHEELS := build/boot-wheels
export KUBEOPS_BOOT_WHEELHOUSE ?= $(CURDIR)/$(BOOT_WHEELS)

.PHONY: venv demo test lint sanity clean collection install host-tools wheels k8s-binaries

venv: $(BIN)/.installed $(COLL_LINK) $(BOOT_WHEELS)/.done

$(BIN)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.txt
	touch $@

$(BIN)/.installed-test: $(BIN)/.installed requirements-test.txt
	$(BIN)/pip install -q -r requirements-test.txt
	touch $@

$(BOOT_WHEELS)/.done: $(BIN)/.installed $(COLL_LINK) hack/boot_wheels.py plugins/module_utils/nodeconfig/boot_artifacts.py
	mkdir -p build
	$(BIN)/python hack/boot_wheels.py $(BOOT_WHEELS)
	touch $@

# The nodes' wheels prefetched into the user's cache, where cluster_update looks when KUBEOPS_BOOT_WHEELHOUSE is
# unset (a no-op once there): the first update of a cluster then downloads nothing (docs/awx.md for an EE).
wheels: $(BIN)/.installed $(COLL_LINK)
	env -u KUBEOPS_BOOT_WHEELHOUSE $(BIN)/python -m ansible_collections.kubeops.kops.plugins.plugin_utils.boot_wheels

$(COLL_LINK):
	mkdir -p $(dir $(COLL_LINK))
	ln -sfn $(CURDIR) $(COLL_LINK)

# The main job on the embedded default: a demo cluster written to a local
# file:// state store; no cloud account involved.
demo: venv
	$(BIN)/ansible-playbook playbooks/create_cluster.yml \
	  -e @playbooks/vars/demo.yml -e state_store=$(DEMO_STORE) -e out_dir=$(CURDIR)/out/terraform
	$(BIN)/ansible-playbook playbooks/get_cluster.yml \
	  -e cluster_name=demo.example.com -e state_store=$(DEMO_STORE) \
	  -e output=$(CURDIR)/out/demo.example.com.yaml
	@echo "Cluster spec: out/demo.example.com.yaml  Terraform: out/terraform/kubernetes.tf  state store: $(DEMO_STORE)"
	@echo "(Terraform for review: its nodes would read the file:// store, which no instance can reach; use s3:// for a real cluster)"

# What the test hosts (tests/hosts/) need on this machine; Debian packages, installed when missing.
HOST_TOOLS := debootstrap systemd-nspawn:systemd-container ssh:openssh-client
host-tools:
	@missing=""; for t in $(HOST_TOOLS); do cmd=$${t%%:*}; pkg=$${t#*:}; \
	  command -v $$cmd >/dev/null || missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ]; then \
	  apt-get install -y -q $$missing >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q $$missing >/dev/null; }; fi

# The real Kubernetes components (kube-apiserver, ..., kubelet, kubectl; etcd; pause; a go-runner) built from the Go
# module proxy into $KUBEOPS_K8S_CACHE (default /var/cache/kubeops-kops/k8s), once per (version, Go, recipe):
# a cold build takes about 15 minutes on 2 cores (both Kubernetes versions, etcd, the tools), a warm run builds
# nothing (hack/k8s_binaries.py, docs/real-cluster.md).
k8s-binaries: $(BIN)/.installed
	$(BIN)/python hack/k8s_binaries.py

test: venv $(BIN)/.installed-test host-tools k8s-binaries
	# KUBEOPS_REQUIRE_REAL_K8S: under make test the real components were just built, so a test that finds none fails
	# instead of skipping.
	# build/test-report.xml: every test's time, for hack/test_durations.py (the slowest-first table, tests/durations.json).
	KUBEOPS_REQUIRE_REAL_K8S=1 $(BIN)/python -m pytest -q -n 2 --durations=25 --junitxml=build/test-report.xml tests
	# lint and ansible-test sanity side by side: each is mostly one process; their output kept apart.
	$(MAKE) --no-print-directory -j2 --output-sync=target lint sanity

lint: $(BIN)/.installed-test $(COLL_LINK)
	$(BIN)/ruff check --select F,E9 plugins tests bench
	$(BIN)/yamllint -s playbooks meta galaxy.yml
	$(BIN)/ansible-lint --offline --profile production playbooks roles

# ansible-test sanity (validate-modules, import, pylint, pep8, ...), offline-safe.
sanity: $(BIN)/.installed-test
	tests/sanity/run.sh

collection:
	$(BIN)/ansible-galaxy collection build --force --output-path build/

# The collection as users get it: the tarball, installed where Ansible looks by default.
# Not into build/collections (this repository's ansible.cfg points Ansible there): that holds
# the in-place link to this checkout, so `install` would find it "already installed" and
# `install --force` would refuse to remove a symlink.
INSTALL_PATH ?= $(HOME)/.ansible/collections
VERSION := $(shell sed -n 's/^version: *//p' galaxy.yml)
install: collection
	ANSIBLE_COLLECTIONS_PATH=$(INSTALL_PATH) $(BIN)/ansible-galaxy collection install --force --offline \
	  -p $(INSTALL_PATH) build/kubeops-kops-$(VERSION).tar.gz

clean:
	rm -rf build out .pytest_cache
