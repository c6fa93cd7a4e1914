#!/usr/bin/env bash
# Validates deploy/k8s offline (no cluster here, and `kubectl apply --dry-run=client` still
# wants one): renders both kustomizations with `kubectl kustomize`, then checks every
# rendered object against Kubernetes' own OpenAPI schema, strictly (an unknown field fails),
# with PyPI's kubernetes-validate. Run by .ci/run. crates/app/tests/compose.rs checks that
# the manifests, docker-compose.yml and the stack registry agree.
#   scripts/k8s-validate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

# The Kubernetes version the schemas are taken from, and the validator's.
KUBERNETES_VERSION=1.32.0
VALIDATOR=kubernetes-validate==1.37.0

ensure_tool kubectl kubernetes-client
ensure_tool python3 python3
venv=target/k8s-validate-venv
if ! "$venv/bin/pip" show -q "${VALIDATOR%%==*}" >/dev/null 2>&1; then
    python3 -m venv "$venv" || die "cannot make a Python venv (Debian: apt-get install python3-venv)"
    "$venv/bin/pip" install -q "$VALIDATOR" || die "cannot install $VALIDATOR from PyPI"
fi

work=$(mktemp -d /tmp/k8s-validate.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The database's init scripts come from the one SQL source, outside deploy/k8s.
kubectl kustomize --load-restrictor LoadRestrictionsNone deploy/k8s > "$work/stacks.yaml" \
    || die "deploy/k8s does not render (kubectl kustomize; kubectl $(kubectl version --client 2>/dev/null | head -n 1))"
kubectl kustomize deploy/k8s/loadgen > "$work/loadgen.yaml" || die "deploy/k8s/loadgen does not render"

validate() { "$venv/bin/kubernetes-validate" --strict --quiet -k "$KUBERNETES_VERSION" "$@"; }

# The validator must be able to say no: a field Kubernetes does not have.
sed 's/^\( *\)imagePullPolicy: IfNotPresent/\1imagePullPolicy: IfNotPresent\n\1imagePulPolicy: Always/' \
    "$work/stacks.yaml" > "$work/broken.yaml"
if validate "$work/broken.yaml" >/dev/null 2>&1; then
    die "kubernetes-validate accepted a manifest with an unknown field: it checks nothing"
fi
validate "$work/stacks.yaml" "$work/loadgen.yaml" || die "deploy/k8s does not validate against Kubernetes $KUBERNETES_VERSION"
objects=$(grep -c '^kind:' "$work/stacks.yaml" "$work/loadgen.yaml" | awk -F: '{n += $2} END {print n}')
echo "${0##*/}: deploy/k8s renders and its $objects objects validate against Kubernetes $KUBERNETES_VERSION ($VALIDATOR, strict)" >&2
