#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Count the places outside a cloud's own package that name a cloud: branches and table rows (issue 30).

An AST walk over plugins/ (generated data files and the cloud packages left out, see SKIPPED).  A place names a
cloud when it uses one of CLOUDS as a string literal, or a constant bound to one (completion's CLOUD_AWS):

- compare:  a comparison with a cloud as one side or in the tuple it is tested against (`cloud == "aws"`,
            `cloud in ("aws", "gce")`); `"gce" in networking` (a literal looked up in a mapping) is a key test
            of the spec, not a branch on the cloud, and is not counted.
- table:    a row of a table keyed or valued by cloud: a dict literal with two or more cloud keys (each key a
            row) or two or more cloud values (each value a row); a tuple/list/set literal of clouds assigned to a
            name or iterated (each cloud a row).
- argument: a cloud passed to a call (`_provider_id(node, "aws")`), except the key of a mapping lookup
            (`.get("aws")`: the spec's authentication.aws is a key, not the cloud).
- default:  a cloud a parameter or an `or` falls back to (`cloud="aws"`, `provider or "aws"`); AWS's partition
            name "aws" (the same word) is not a cloud and is left out.

Usage: python3 hack/cloud_branches.py [--files] [ROOT]  (ROOT: the collection, default this checkout).
Prints the total, by directory under plugins/module_utils/ and by kind; --files lists every place.
"""

from __future__ import annotations

import argparse
import ast
import collections
import pathlib
import signal
import sys

# kops' cloudProvider values (kops' api.CloudProviderID) and this collection's provider packages.
CLOUDS = frozenset(("aws", "gce", "metal", "openstack", "azure", "digitalocean", "hetzner", "scaleway", "linode"))
# Generated tables (their rows come from kops' sources) and the cloud-specific packages: what is left is the code
# every cloud shares.
SKIPPED_DIRS = ("plugins/module_utils/providers",)
GENERATED_SUFFIXES = ("_data.py", "_crds.py")
KIND_PREFIXES = {"aws_": "aws", "google_": "gce"}
KEY_LOOKUPS = frozenset(("get", "pop", "setdefault", "__getitem__", "__contains__"))


def _is_per_cloud(relative):
    """A file or directory named by its cloud (model/aws/, tasks/gce/, cloud/aws.py, cloud/aws_facts.py) is that
    cloud's own code, wherever it sits."""
    parts = relative.parts
    stem = relative.stem
    return (any(part in CLOUDS for part in parts[:-1]) or stem in CLOUDS or
            any(stem.startswith(c + "_") or stem.endswith("_" + c) for c in CLOUDS))


def _cloud(node, constants):
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in CLOUDS:
        return node.value
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return constants.get(name)


def _kind_cloud(node):
    """The cloud of a task kind literal ("aws_launch_template" -> aws), None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return next((c for prefix, c in KIND_PREFIXES.items() if node.value.startswith(prefix)), None)
    return None


def _sequence_clouds(node, constants):
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [c for c in (_cloud(e, constants) for e in node.elts) if c]
    return []


def _mentions_partition(node):
    return "partition" in ast.unparse(node).lower()


class _Walker(ast.NodeVisitor):
    def __init__(self, constants):
        self.constants = constants
        self.places = []  # (line, kind, cloud)
        self._counted = set()  # ids of literal nodes already counted (a tuple compared is one compare, not rows)

    def _add(self, node, kind, cloud, literals=()):
        self.places.append((node.lineno, kind, cloud))
        self._counted.update(id(n) for n in literals)

    def visit_Compare(self, node):
        operands = [node.left] + list(node.comparators)
        key_test = isinstance(node.ops[0], (ast.In, ast.NotIn)) and isinstance(node.left, ast.Constant) and \
            not isinstance(node.comparators[0], (ast.Tuple, ast.List, ast.Set))
        if not key_test:
            for operand in operands:
                clouds = [_cloud(operand, self.constants)] if _cloud(operand, self.constants) else \
                    _sequence_clouds(operand, self.constants)
                if clouds:
                    self._add(node, "compare", ",".join(clouds), [operand] + list(getattr(operand, "elts", [])))
                    break
        self.generic_visit(node)

    def visit_Dict(self, node):
        keys = [k for k in node.keys if k is not None and _cloud(k, self.constants)]
        values = [v for v in node.values if _cloud(v, self.constants)]
        if len(keys) >= 2:
            for key in keys:
                self._add(key, "table", _cloud(key, self.constants), [key])
        if len(values) >= 2:
            for value in values:
                self._add(value, "table", _cloud(value, self.constants), [value])
        self.generic_visit(node)

    def _sequence_table(self, node):
        elements = getattr(node, "elts", [])
        clouds = [_cloud(e, self.constants) or _kind_cloud(e) for e in elements]
        if not elements or not all(clouds):
            return
        for element, cloud in zip(elements, clouds):
            if id(element) not in self._counted:
                self._add(element, "table", cloud, [element])

    def visit_Assign(self, node):
        # CLOUD_AWS = "aws" declares a name, it does not branch; GCE_LIKE_NETWORKS = ("gce",) names networking modes.
        names = " ".join(ast.unparse(t) for t in node.targets)
        if not isinstance(node.value, ast.Constant) and "NETWORK" not in names.upper():
            self._sequence_table(node.value)
        self.generic_visit(node)

    def visit_For(self, node):
        self._sequence_table(node.iter)
        self.generic_visit(node)

    def visit_comprehension(self, node):
        self._sequence_table(node.iter)
        self.generic_visit(node)

    def visit_Call(self, node):
        lookup = isinstance(node.func, ast.Attribute) and node.func.attr in KEY_LOOKUPS
        arguments = list(node.args[1:] if lookup else node.args) + [k.value for k in node.keywords]
        if lookup and len(node.args) > 1 and not _mentions_partition(node):  # .get(key, "aws"): a fallback
            for argument in node.args[1:]:
                if _cloud(argument, self.constants) and id(argument) not in self._counted:
                    self._add(argument, "default", _cloud(argument, self.constants), [argument])
            arguments = [k.value for k in node.keywords]
        for argument in arguments:
            cloud = _cloud(argument, self.constants)
            if cloud and isinstance(argument, ast.Constant) and id(argument) not in self._counted:
                self._add(argument, "argument", cloud, [argument])
        self.generic_visit(node)

    def _defaults(self, node):
        arguments = node.args
        positional = arguments.posonlyargs + arguments.args
        pairs = list(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults)) + \
            [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None]
        for argument, default in pairs:
            if _cloud(default, self.constants) and "partition" not in argument.arg:
                self._add(default, "default", _cloud(default, self.constants), [default])

    def visit_FunctionDef(self, node):
        self._defaults(node)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_BoolOp(self, node):
        if isinstance(node.op, ast.Or) and not _mentions_partition(node):
            last = node.values[-1]
            if _cloud(last, self.constants) and id(last) not in self._counted:
                self._add(last, "default", _cloud(last, self.constants), [last])
        self.generic_visit(node)


def _constants(trees):
    """Module-level names bound to a cloud literal (CLOUD_GCE = "gce"), across the files walked."""
    found = {}
    for tree in trees:
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and \
                    node.value.value in CLOUDS:
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id.isupper():
                        found[target.id] = node.value.value
    return found


def files(root):
    for path in sorted((root / "plugins").rglob("*.py")):
        relative = path.relative_to(root)
        if any(str(relative).startswith(d + "/") for d in SKIPPED_DIRS) or path.name.endswith(GENERATED_SUFFIXES) \
                or _is_per_cloud(relative.relative_to("plugins")):
            continue
        yield relative, path


def count(root):
    """{relative path: [(line, kind, cloud)]} of the files with at least one place."""
    parsed = [(relative, ast.parse(path.read_text(), str(path))) for relative, path in files(root)]
    constants = _constants(tree for _relative, tree in parsed)
    result = {}
    for relative, tree in parsed:
        walker = _Walker(constants)
        walker.visit(tree)
        if walker.places:
            result[str(relative)] = sorted(walker.places)
    return result


def _area(path):
    parts = pathlib.PurePath(path).parts
    return parts[2] if len(parts) > 3 and parts[1] == "module_utils" else "/".join(parts[:-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("root", nargs="?", default=str(pathlib.Path(__file__).resolve().parent.parent))
    parser.add_argument("--files", action="store_true", help="list every place")
    args = parser.parse_args(argv)
    result = count(pathlib.Path(args.root))
    total = sum(len(p) for p in result.values())
    by_area = collections.Counter()
    by_kind = collections.Counter()
    for path, places in result.items():
        by_area[_area(path)] += len(places)
        by_kind.update(kind for _line, kind, _cloud in places)
    print("%d places name a cloud outside providers/, in %d files" % (total, len(result)))
    print("by area: " + ", ".join("%s %d" % item for item in by_area.most_common()))
    print("by kind: " + ", ".join("%s %d" % item for item in by_kind.most_common()))
    for path, places in sorted(result.items(), key=lambda item: -len(item[1])):
        print("%4d  %s" % (len(places), path))
        if args.files:
            for line, kind, cloud in places:
                print("        %d: %s %s" % (line, kind, cloud))
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the listing quietly
    sys.exit(main())
