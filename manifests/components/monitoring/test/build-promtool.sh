#!/usr/bin/env bash
# Builds promtool of Prometheus v0.316.0 from the Go module proxy into a cache directory outside
# the repository (beside the e2e control plane), keyed by the version, and prints its path. Only
# the first run on a machine builds. remove_all_sd leaves out Prometheus's service discovery
# plugins (AWS, Azure, GCE, Kubernetes, ...), which `promtool test rules` never uses and which
# are most of a full build.
#
# Usage: manifests/components/monitoring/test/build-promtool.sh
# Env:   E2E_CACHE  cache root (default $HOME/.cache/memgraph-hooks-e2e)
set -euo pipefail

VERSION=v0.316.0
CACHE_ROOT="${E2E_CACHE:-$HOME/.cache/memgraph-hooks-e2e}"
BIN="$CACHE_ROOT/promtool-$VERSION-remove_all_sd/bin"

export GOPROXY="${E2E_GOPROXY:-https://proxy.golang.org}"
export GOTOOLCHAIN=local
export GOFLAGS=-buildvcs=false
export CGO_ENABLED=0

mkdir -p "$BIN"
# One build at a time per cache directory; a second caller waits and then reuses the result.
exec 9>"$BIN/.lock"
flock 9
if [[ ! -x "$BIN/promtool" ]]; then
	echo "build-promtool.sh: building promtool $VERSION into $BIN" >&2
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	GOBIN="$tmp" go install -tags remove_all_sd "github.com/prometheus/prometheus/cmd/promtool@$VERSION"
	mv -f "$tmp/promtool" "$BIN/promtool"
fi
echo "$BIN/promtool"
