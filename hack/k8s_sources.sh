#!/bin/sh
# Assemble the source files hack/gen_k8s_rules.py reads, from git clones of the repositories named below,
# into OUT (never into this repository: the sources are not committed).  docs/data-tables.md.
#
#   hack/k8s_sources.sh OUT MIRROR
#
# MIRROR holds one git directory (bare or not) per repository, named <owner>+<name>/repo (as the team's
# snapshots are) or <owner>+<name>: kubernetes/{kubelet,component-base,apimachinery,api} (their release tags
# v0.<minor>.<patch> are Kubernetes 1.<minor>.<patch>), containerd/containerd, and, for the kubelet's
# --node-labels check, kubernetes/kubernetes (cmd/kubelet/app/options/options.go at KUBELET_OPTIONS_COMMIT);
# without a kubernetes/kubernetes clone, put that file in OUT/kubelet-options/options.go yourself.
# OUT/SOURCES records each file: <file> <repository> <tag or ref> <commit> <path in the repository>.
#
# The components' command-line flags (OUT/flags/<minor>/k8s.io/<module>/<package>/, whole packages) need
# kubernetes/kubernetes' cmd/ and pkg/ trees, which no fetchable clone carries per release: they are taken from
# openshift/microshift's release-4.NN branches, whose deps/github.com/openshift/kubernetes is the Kubernetes tree
# OpenShift builds (its go.mod names the upstream release it is rebased on, `k8s.io/kubernetes v1.NN.P`, which
# this script reads and records), and the staging packages (apiserver, component-base, controller-manager,
# cloud-provider) from their own repositories at the tag v0.NN.P of that release.  OpenShift's own flags
# ("carries") are left out by hack/gen_k8s_rules.py (OPENSHIFT_CARRIES).  docs/data-tables.md.
set -eu
OUT=$1
MIRROR=$2
MINORS=${MINORS:-"32 33 34 35 36"}                                 # kops 1.37 supports Kubernetes 1.32 and newer
CONTAINERD_RELEASES=${CONTAINERD_RELEASES:-"v1.7 v2.0 v2.1 v2.2 v2.3"}  # the newest patch of each
KUBELET_OPTIONS_COMMIT=${KUBELET_OPTIONS_COMMIT:-6785e9ed401a526cfb4ae33d498b088e27237ad1}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
: > "$OUT/SOURCES"

gitdir() {
  for dir in "$MIRROR/$1/repo" "$MIRROR/$1"; do
    if [ -d "$dir" ]; then echo "$dir"; return; fi
  done
  echo "no clone of $1 under $MIRROR" >&2
  exit 1
}
take() {  # dest repo ref path...
  dest=$1 repo=$2 ref=$3
  shift 3
  dir=$(gitdir "$repo")
  commit=$(git -C "$dir" rev-parse "$ref^{commit}")
  for path in "$@"; do
    mkdir -p "$OUT/$dest/$(dirname "$path")"
    git -C "$dir" show "$commit:$path" > "$OUT/$dest/$path"
    echo "$dest/$path $(echo "$repo" | tr + /) $ref $commit $path" >> "$OUT/SOURCES"
  done
}
latest() {  # repo tag-prefix: the newest release tag X.Y.Z with that prefix
  git -C "$(gitdir "$1")" for-each-ref refs/tags --format='%(refname:short)' | grep -E "^$2\.[0-9]+$" | sort -V | tail -1
}

for minor in $MINORS; do
  v=1.$minor
  tag=$(latest kubernetes+kubelet "v0.$minor")
  take "$v/k8s.io/kubelet" kubernetes+kubelet "$tag" config/v1beta1/types.go pkg/apis/well_known_labels.go
  tag=$(latest kubernetes+component-base "v0.$minor")
  take "$v/k8s.io/component-base" kubernetes+component-base "$tag" logs/api/v1/types.go tracing/api/v1/types.go
  tag=$(latest kubernetes+apimachinery "v0.$minor")
  take "$v/k8s.io/apimachinery" kubernetes+apimachinery "$tag" pkg/apis/meta/v1/duration.go \
    pkg/apis/meta/v1/types.go pkg/apis/meta/v1/time.go pkg/api/resource/quantity.go pkg/util/validation/validation.go
  # From 1.35 the label syntax lives in pkg/api/validate/content (validation.go names it from there).
  if git -C "$(gitdir kubernetes+apimachinery)" cat-file -e "$tag:pkg/api/validate/content/kube.go" 2>/dev/null; then
    take "$v/k8s.io/apimachinery" kubernetes+apimachinery "$tag" pkg/api/validate/content/kube.go \
      pkg/api/validate/content/dns.go
  fi
  tag=$(latest kubernetes+api "v0.$minor")
  take "$v/k8s.io/api" kubernetes+api "$tag" core/v1/types.go core/v1/well_known_labels.go
done

for release in $CONTAINERD_RELEASES; do
  tag=$(latest containerd+containerd "$release")
  case $tag in
    v1.*) take "containerd/$tag" containerd+containerd "$tag" pkg/cri/config/config.go pkg/cri/config/config_unix.go \
            services/server/config/config.go pkg/nri/config.go pkg/cri/cri.go ;;
    *) take "containerd/$tag" containerd+containerd "$tag" internal/cri/config/config.go \
         internal/cri/config/config_unix.go cmd/containerd/server/config/config.go internal/nri/config.go \
         plugins/cri/cri.go plugins/cri/runtime/plugin.go plugins/cri/images/plugin.go plugins/nri/plugin.go \
         version/version.go ;;
  esac
done

# --- the components' flags ---------------------------------------------------------------------------------
MICROSHIFT_BRANCHES=${MICROSHIFT_BRANCHES:-"32:release-4.19 33:release-4.20 34:release-4.21 35:release-4.22 36:release-4.23"}
K8S_FLAG_PACKAGES="cmd/kubelet/app cmd/kubelet/app/options pkg/kubelet/config cmd/kube-apiserver/app
  cmd/kube-apiserver/app/options pkg/controlplane/apiserver/options pkg/kubeapiserver/options
  plugin/pkg/admission/defaulttolerationseconds cmd/kube-controller-manager/app cmd/kube-controller-manager/app/options
  cmd/kube-scheduler/app cmd/kube-scheduler/app/options cmd/kube-proxy/app"
STAGING_FLAG_PACKAGES="apiserver:pkg/server/options apiserver:plugin/pkg/audit/log apiserver:plugin/pkg/audit/webhook
  component-base:cli/globalflag component-base:compatibility component-base:config/options component-base:featuregate
  component-base:logs component-base:logs/api/v1 component-base:metrics component-base:version/verflag
  controller-manager:options controller-manager:pkg/leadermigration/options cloud-provider:options"
take_package() {  # dest repo ref package-path-in-repo: the package's non-test Go files, one SOURCES line
  dest=$1 repo=$2 ref=$3 package=$4
  dir=$(gitdir "$repo")
  commit=$(git -C "$dir" rev-parse "$ref^{commit}")
  files=$(git -C "$dir" ls-tree --name-only "$commit" "$package/" 2>/dev/null | grep '\.go$' | grep -v '_test\.go$') || true
  [ -n "$files" ] || return 0   # a package this release does not have (component-base/compatibility before 1.33)
  mkdir -p "$OUT/$dest"
  for file in $files; do
    git -C "$dir" show "$commit:$file" > "$OUT/$dest/$(basename "$file")"
  done
  echo "$dest/ $(echo "$repo" | tr + /) $ref $commit $package/" >> "$OUT/SOURCES"
}
for pair in $MICROSHIFT_BRANCHES; do
  minor=${pair%%:*} branch=${pair#*:}
  ms=$(gitdir openshift+microshift)
  release=$(git -C "$ms" show "$branch:go.mod" | sed -n 's/^[[:space:]]*k8s.io\/kubernetes \(v1\.[0-9]*\.[0-9]*\)$/\1/p')
  case $release in
    v1.$minor.*) ;;
    *) echo "openshift/microshift $branch: go.mod names k8s.io/kubernetes '$release', not 1.$minor" >&2; exit 1 ;;
  esac
  for package in $K8S_FLAG_PACKAGES; do
    take_package "flags/1.$minor/k8s.io/kubernetes/$package" openshift+microshift "$branch" \
      "deps/github.com/openshift/kubernetes/$package"
  done
  sed -i "s#^\(flags/1.$minor/k8s.io/kubernetes/[^ ]* openshift/microshift\) $branch #\1 $branch:$release #" "$OUT/SOURCES"
  for item in $STAGING_FLAG_PACKAGES; do
    module=${item%%:*} package=${item#*:}
    # the staging tag of that release (v0.NN.P); a snapshot without it: its newest patch before it
    tag=$(git -C "$(gitdir "kubernetes+$module")" for-each-ref refs/tags --format='%(refname:short)' |
          grep -E "^v0\.$minor\.[0-9]+$" | sort -V | awk -v want="v0.${release#v1.}" '
            { split($0, a, "."); split(want, b, "."); if (a[3] + 0 <= b[3] + 0) last = $0 } END { print last }')
    take_package "flags/1.$minor/k8s.io/$module/$package" "kubernetes+$module" "$tag" "$package"
  done
done

if [ -d "$MIRROR/kubernetes+kubernetes" ]; then
  take kubelet-options kubernetes+kubernetes "$KUBELET_OPTIONS_COMMIT" cmd/kubelet/app/options/options.go
  mv "$OUT/kubelet-options/cmd/kubelet/app/options/options.go" "$OUT/kubelet-options/options.go"
  rm -r "$OUT/kubelet-options/cmd"
  sed -i 's#^kubelet-options/cmd/kubelet/app/options/options.go #kubelet-options/options.go #' "$OUT/SOURCES"
elif [ -f "$OUT/kubelet-options/options.go" ]; then
  echo "kubelet-options/options.go kubernetes/kubernetes index-copy $KUBELET_OPTIONS_COMMIT" \
    "cmd/kubelet/app/options/options.go" >> "$OUT/SOURCES"
else
  echo "no kubernetes/kubernetes clone: save cmd/kubelet/app/options/options.go (commit $KUBELET_OPTIONS_COMMIT)" \
    "as $OUT/kubelet-options/options.go and run again" >&2
  exit 1
fi
