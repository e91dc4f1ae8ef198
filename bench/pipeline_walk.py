"""Places visited following one parameter through an update (issue 30), measured with sys.settrace (run by hand).

    /work/main/.venv/bin/python bench/pipeline_walk.py

    /work/main/.venv/bin/python bench/pipeline_walk.py -v         # and every visit

The update: a 2-group AWS cluster (bench/aws_update.py's) created on moto by a direct apply, applied again (a
no-op), then rendered to Terraform, each run traced.  Two parameters are followed, each on its own: the cluster's
instance groups and its completed spec, as the update loaded them (the return of updates.load_completed).  Every
call of a function in plugins/module_utils whose arguments hold the followed object (for the groups: the list, a
group, or a list, tuple or dict holding one; for the spec: the completed Cluster or its spec) is a visit.  A group
is known by its name (an object with a spec whose metadata.name is one of the loaded groups'), so a group completed
again downstream, a new dict, is still followed; the list and the spec by identity.  Only the calling thread is
traced: the engine's workers run the tasks, which are handed neither.

A place is (file, function).  In the sequence of visits' files (consecutive repeats of a file as one):
- re-entries: a file entered again after the walk left it;
- climbs: a visit whose file's layer is upstream of its caller's (docs/architecture.md's flow: api -> completion ->
  statestore -> model -> tasks -> engine -> target; the pipeline, updates.py and clusters.py, above them all; leaves
  any layer may use, such as zones.py and errors.py, are no layer and never climb);
  api/objects.py (the objects' format: name_of, load and dump) is read by every layer as the data itself, so it
  counts as a place but, like the leaves, neither splits the walk nor climbs;
- updates.py entered: how often the walk comes back to the pipeline.
"""

from __future__ import annotations

import collections
import os
import pathlib
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "build" / "collections"), str(REPO)]

from ansible_collections.kubeops.kops.plugins.module_utils import updates  # noqa: E402
from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import AwsCloud  # noqa: E402
from bench.aws_update import make_cluster  # noqa: E402
from tests import servers  # noqa: E402

MODULE_UTILS = os.path.dirname(updates.__file__) + os.sep  # as imported: through build/collections

# docs/architecture.md's flow, upstream first.  nodeconfig/, pki/ and addons/ hang off the state store (what the
# nodes read); providers/ (the driver) answers the pipeline for the model's tasks, so it sits with model/.
LAYERS = {
    "updates.py": 0, "clusters.py": 0,
    "api": 1, "completion": 2,
    "statestore": 3, "pki": 3, "nodeconfig": 3, "addons": 3,
    "model": 4, "providers": 4,
    "tasks": 5, "engine": 6, "cloud": 7,
}


FORMAT = "api/objects.py"


def layer_of(relpath):
    """The layer rank of a module_utils file, None for a leaf any layer may use."""
    return None if relpath == FORMAT else LAYERS.get(relpath.split("/", 1)[0])


def is_followed(value, followed, group_names):
    if id(value) in followed:
        return True
    return (isinstance(value, dict) and "spec" in value
            and (value.get("metadata") or {}).get("name") in group_names)


def holds(value, followed, group_names):
    """Whether value is one of the followed objects, or a list, tuple or dict holding one."""
    if is_followed(value, followed, group_names):
        return True
    if isinstance(value, (list, tuple)):
        return any(is_followed(item, followed, group_names) for item in value)
    if isinstance(value, dict):
        return any(is_followed(item, followed, group_names) for item in value.values())
    return False


class Walk(object):
    """The visits of one traced run: [(file, function, caller file)]."""

    def __init__(self, parameter):
        self.parameter = parameter
        self.visits = []
        self.followed = {}  # id -> object (kept alive so that an id is not reused)
        self.group_names = frozenset()

    def follow(self, completed, groups):
        followed = [groups] if self.parameter == "groups" else [completed, completed["spec"]]
        self.followed = {id(value): value for value in followed}
        if self.parameter == "groups":
            self.group_names = frozenset(group["metadata"]["name"] for group in groups)

    def tracer(self, frame, event, _arg):
        if event != "call":
            return None
        filename = frame.f_code.co_filename
        if not filename.startswith(MODULE_UTILS):
            return None
        code = frame.f_code
        if code.co_name == "load_completed" and not self.followed:
            return self.on_return  # the groups the update loads are followed from its return on
        if not self.followed or code.co_name.startswith("<"):  # comprehensions and lambdas are their caller's
            return None
        arguments = [frame.f_locals.get(name) for name in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]]
        if code.co_flags & 0x04:  # *args
            arguments.extend(frame.f_locals.get(code.co_varnames[code.co_argcount + code.co_kwonlyargcount]) or ())
        if any(holds(argument, self.followed, self.group_names) for argument in arguments):
            caller = frame.f_back
            while caller is not None and not caller.f_code.co_filename.startswith(MODULE_UTILS):
                caller = caller.f_back
            self.visits.append((filename[len(MODULE_UTILS):], code.co_name,
                                caller.f_code.co_filename[len(MODULE_UTILS):] if caller else None))
        return None

    def on_return(self, frame, event, value):
        if event == "return" and isinstance(value, tuple) and len(value) == 2:
            self.follow(*value)
        return self.on_return

    def figures(self):
        files = []
        for filename, _function, _caller in self.visits:
            if layer_of(filename) is None:
                continue
            if not files or files[-1] != filename:
                files.append(filename)
        entered = collections.Counter(files)
        climbs = 0
        for filename, _function, caller in self.visits:
            to, at = layer_of(filename), layer_of(caller) if caller else None
            if to is not None and at is not None and to < at:
                climbs += 1
        return {
            "places": len(set((f, fn) for f, fn, _c in self.visits)),
            "files": len(entered),
            "re-entries": sum(count - 1 for count in entered.values()),
            "climbs": climbs,
            "updates.py entered": entered.get("updates.py", 0),
        }


def traced(run, parameter):
    walk = Walk(parameter)
    sys.settrace(walk.tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    return walk


def main():
    verbose = "-v" in sys.argv
    server = servers.MotoServer().start()
    os.environ.update(servers.AWS_TEST_ENV)
    os.environ["AWS_ENDPOINT_URL"] = server.url
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = "file://%s/state" % tmp
            for parameter in ("groups", "cluster"):
                name = "walk%s.example.com" % parameter[0]
                service = make_cluster(store, name, 2)
                runs = [("direct (create)", lambda: updates.apply_direct(service, name, False, AwsCloud)),
                        ("direct (no-op)", lambda: updates.apply_direct(service, name, False, AwsCloud)),
                        ("terraform", lambda: updates.render_terraform(service, name, tmp + "/tf", dry_run=False))]
                for label, run in runs:
                    walk = traced(run, parameter)
                    figures = walk.figures()
                    print("%-8s %-16s %s" % (parameter, label, ", ".join("%s %d" % item for item in figures.items())))
                    if verbose:
                        for filename, function, caller in walk.visits:
                            print("    %-45s %-40s <- %s" % (filename, function, caller))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
