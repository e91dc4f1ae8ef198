# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Which clouds this collection builds: the names of the packages under providers/, found on disk.

Kept apart from providers/ (and importing nothing of the collection but errors.py) so that the layers below the
providers (api/ validates cloudProvider, completion/ accepts cloud_provider, nodeconfig/ and rolling/ read what a
cloud declares) can ask without importing a cloud.

Where the packages are found:
- next to this file, when the collection runs from its directory (the controller: action and inventory plugins,
  tests);
- in the collection directory the action plugins hand to their module in KUBEOPS_COLLECTION_DIR.  A module runs
  from Ansible's zip (AnsiballZ), which holds only the module_utils the module imports by name; aws and gce are
  imported by name (providers/registry.py) and travel in the zip, a package added later does not.
  enable_collection_imports() lets the module import the rest of the collection from that directory: a finder
  placed after Python's own, so whatever the zip holds is still taken from the zip.
"""

from __future__ import annotations

import importlib.util
import os
import sys

from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError

BUILT_IN = ("aws", "gce")


class NotShipped(CloudError):
    """A cloud's package the running module can neither find in its zip nor in a collection directory."""


COLLECTION_ENV = "KUBEOPS_COLLECTION_DIR"
PREFIX = "ansible_collections.kubeops.kops."
_PROVIDERS = os.path.join("plugins", "module_utils", "providers")


def search_paths():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "providers")
    paths = [here] if os.path.isdir(here) else []
    if os.environ.get(COLLECTION_ENV):
        paths.append(os.path.join(os.environ[COLLECTION_ENV], _PROVIDERS))
    return paths


def discovered():
    """The cloud packages found on disk beyond the built-in ones: {name: directory holding providers/}."""
    found = {}
    for path in search_paths():
        try:
            entries = sorted(os.listdir(path))
        except OSError:
            continue
        for entry in entries:
            if entry.isidentifier() and entry not in BUILT_IN and entry not in found and \
                    os.path.isfile(os.path.join(path, entry, "provider.py")):
                found[entry] = path
    return found


def declared(name):
    """The PROVIDER of cloud name's package (providers/<name>/provider.py), for what it declares as data: imported by
    name, so that the layers below providers/ depend on no cloud's code (provider.py imports only providers/base.py).
    aws and gce travel in the zip of every module that imports providers/registry.py (which imports them by name),
    and a module whose action hands over the collection directory finds them there, as it finds a package added
    later.  None for a name without a package."""
    import importlib
    if not isinstance(name, str) or (name not in BUILT_IN and name not in discovered()):
        return None
    enable_collection_imports()
    try:
        return importlib.import_module(PREFIX + "plugins.module_utils.providers.%s.provider" % name).PROVIDER
    except ImportError as exc:  # a module packaged without the cloud's package, run where no directory was handed
        raise NotShipped("the %s cloud's package (providers/%s/provider.py) is not in this module's zip and no "
                         "collection directory was handed over (%s: %s); run the module on the controller with a "
                         "local connection, where the collection's action plugin hands its directory"
                         % (name, name, COLLECTION_ENV, exc))


def declared_value(name, attribute, default):
    """What cloud name's Provider declares as data (providers/base.py's attributes, e.g. surges_by_default);
    default for a name without a package (kops knows clouds this collection does not build)."""
    provider = declared(name)
    return getattr(provider, attribute) if provider is not None else default


def part(name, part_name, built_in):
    """A cloud's module part_name (providers/<cloud>/<part_name>.py): built_in[name]() for aws and gce (their
    registries import them by name, for Ansible's packager), else the package's file found on disk; None if the
    cloud has no such part."""
    if name in built_in:
        return built_in[name]()
    found = discovered()
    if name in found and os.path.isfile(os.path.join(found[name], name, part_name + ".py")):
        import importlib
        enable_collection_imports()
        return importlib.import_module(PREFIX + "plugins.module_utils.providers.%s.%s" % (name, part_name))
    return None


def names():
    """Every cloudProvider value with a package, sorted."""
    return sorted(set(BUILT_IN) | set(discovered()))


class _CollectionFinder(object):
    """Finds ansible_collections.kubeops.kops.* modules in a collection directory (after Python's own finders)."""

    def __init__(self, root):
        self.root = root

    def find_spec(self, fullname, path=None, target=None):
        del path, target
        if not fullname.startswith(PREFIX):
            return None
        base = os.path.join(self.root, *fullname[len(PREFIX):].split("."))
        if os.path.isfile(os.path.join(base, "__init__.py")):
            return importlib.util.spec_from_file_location(fullname, os.path.join(base, "__init__.py"),
                                                          submodule_search_locations=[base])
        if os.path.isfile(base + ".py"):
            return importlib.util.spec_from_file_location(fullname, base + ".py")
        return None


def enable_collection_imports():
    """Let modules of the collection directory in KUBEOPS_COLLECTION_DIR be imported when nothing else has them."""
    root = os.environ.get(COLLECTION_ENV)
    if not root or any(isinstance(f, _CollectionFinder) and f.root == root for f in sys.meta_path):
        return
    sys.meta_path.append(_CollectionFinder(root))
