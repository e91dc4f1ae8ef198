"""Reading kops' Go API types with regular expressions (for the hack/gen_*.py scripts).

Enough of Go for gofmt-formatted type declarations: `type X struct { ... }`
with one field per line and its struct tags, and `type X string`.  Not part
of the collection; stdlib only.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import subprocess
import sys

_STRUCT_START = re.compile(r"^type\s+(\w+)\s+struct\s*\{\s*(\})?\s*$")
_ALIAS = re.compile(r"^type\s+(\w+)\s+(string|bool|int|int32|int64)\s*$")
# A named field: `Name Type `tags``; an embedded one: `pkg.Type `tags`` or `Type`.
_FIELD = re.compile(r"^\s*([A-Z]\w*)\s+([^\s`]+)\s*(?:`([^`]*)`)?\s*(?://.*)?$")
_EMBEDDED = re.compile(r"^\s*\*?([\w.]+)\s*(?:`([^`]*)`)?\s*(?://.*)?$")
_TAG = re.compile(r'([\w-]+):"([^"]*)"')


class GoField:
    """One field of a Go struct: its Go name, type (as written) and tags."""

    def __init__(self, name, go_type, tags, embedded=False):
        self.name = name
        self.go_type = go_type
        self.tags = tags
        self.embedded = embedded

    @property
    def json_name(self):
        """The JSON key of the field; None for `json:"-"` and for an inlined embedded struct."""
        tag = self.tags.get("json")
        if tag == "-":
            return None
        name = (tag or "").split(",")[0]
        if name:
            return name
        return None if self.embedded else self.name

    @property
    def inline(self):
        """An embedded struct without a JSON name: its fields are the parent's (as in encoding/json)."""
        return self.embedded and not (self.tags.get("json") or "").split(",")[0]

    def __repr__(self):
        return "GoField(%r, %r, %r)" % (self.name, self.go_type, self.tags)


def parse_tags(text):
    return dict(_TAG.findall(text or ""))


def parse_go(text):
    """(structs, aliases) declared in Go source text.

    structs: name -> [GoField] in declaration order; aliases: name -> underlying type.
    """
    structs, aliases = {}, {}
    current = None
    for line in text.splitlines():
        if current is None:
            match = _STRUCT_START.match(line)
            if match:
                structs[match.group(1)] = []
                if not match.group(2):
                    current = structs[match.group(1)]
                continue
            match = _ALIAS.match(line)
            if match:
                aliases[match.group(1)] = match.group(2)
            continue
        if line.startswith("}"):
            current = None
            continue
        code = line.strip()
        if not code or code.startswith("//"):
            continue
        match = _FIELD.match(line)
        if match and match.group(2).startswith(("struct", "interface", "func")):
            raise ValueError("cannot read an anonymous %s type in a struct: %r" % (match.group(2), line))
        if match:
            current.append(GoField(match.group(1), match.group(2), parse_tags(match.group(3))))
            continue
        match = _EMBEDDED.match(line)
        if match:
            go_type = match.group(1)
            current.append(GoField(go_type.split(".")[-1], go_type, parse_tags(match.group(2)), embedded=True))
            continue
        raise ValueError("cannot read this Go struct line: %r" % line)
    return structs, aliases


def parse_package(directory):
    """parse_go over every non-test, non-generated .go file of a directory."""
    structs, aliases = {}, {}
    for path in sorted(pathlib.Path(directory).glob("*.go")):
        if path.name.endswith("_test.go") or path.name.startswith("zz_generated"):
            continue
        file_structs, file_aliases = parse_go(path.read_text(encoding="utf-8"))
        structs.update(file_structs)
        aliases.update(file_aliases)
    return structs, aliases


def kops_version(kops):
    """KOPS_RELEASE_VERSION from a kops checkout's kops-version.go."""
    text = (pathlib.Path(kops) / "kops-version.go").read_text(encoding="utf-8")
    match = re.search(r'KOPS_RELEASE_VERSION\s*=\s*"([^"]+)"', text)
    if not match:
        raise ValueError("no KOPS_RELEASE_VERSION in %s/kops-version.go" % kops)
    return match.group(1)


def git_commit(kops, commit=None):
    """The short commit of a kops checkout (7 hex digits), from --commit or from git."""
    if commit:
        return commit[:7]
    try:
        top, short = subprocess.run(["git", "-C", str(kops), "rev-parse", "--show-toplevel", "--short=7", "HEAD"],
                                    capture_output=True, text=True, check=True).stdout.split()
    except (OSError, ValueError, subprocess.CalledProcessError):
        top, short = None, None
    # A directory inside some other repository (a test tree, say) is not a kops checkout.
    if top is None or pathlib.Path(top).resolve() != pathlib.Path(kops).resolve():
        raise ValueError("%s is not a git checkout; say which kops commit it is with --commit" % kops)
    return short


def main(generate, description, options=()):
    """The command line every generator shares: --kops DIR [--write FILE] [--commit SHA].

    options: a generator's own (flag, help) pairs, passed to generate by their dest names.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--kops", required=True, help="a kops source checkout (github.com/kubernetes/kops)")
    parser.add_argument("--write", metavar="FILE", help="write the table to FILE instead of stdout")
    parser.add_argument("--commit", help="the kops commit the checkout is at (default: asked of git)")
    for flag, text in options:
        parser.add_argument(flag, help=text)
    args = parser.parse_args()
    if not os.path.isdir(args.kops):
        parser.error("--kops %s is not a directory" % args.kops)
    extra = {name: getattr(args, name) for name in (flag.lstrip("-").replace("-", "_") for flag, _help in options)}
    try:
        text = generate(args.kops, commit=args.commit, **extra)
    except (OSError, ValueError) as err:
        print("error: %s" % err, file=sys.stderr)
        return 1
    if args.write:
        pathlib.Path(args.write).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
