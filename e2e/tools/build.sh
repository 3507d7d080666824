#!/usr/bin/env bash
# Builds the pinned control plane for the e2e suite from the Go module proxy only:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok,
# plus kwok's Stage YAMLs copied from its module, and versitygw, the S3-compatible object store
# the backup tests write to. Binaries land in cache directories outside the repository, keyed by
# the versions, and are reused when present, so only the first run on a machine pays for the
# build (about 15 minutes on 2 cores with an empty Go build cache). versitygw has a directory of
# its own, so that adding or moving it leaves the control plane's cache valid.
#
# Usage: e2e/tools/build.sh                            # builds what is missing; prints the
#                                                      # control plane's bin directory
#        e2e/tools/build.sh --print-bin-dir            # prints that directory, builds nothing
#        e2e/tools/build.sh --print-versitygw-bin-dir  # prints versitygw's, builds nothing
# Env:   E2E_CACHE  cache root (default $HOME/.cache/memgraph-hooks-e2e)
set -euo pipefail

ETCD_VERSION=v3.7.3
K8S_VERSION=v1.37.2
KWOK_VERSION=v0.8.0
VERSITYGW_VERSION=v1.8.0

# The staging modules (k8s.io/api, ...) carry the same minor/patch as Kubernetes with major 0.
K8S_STAGING_VERSION="v0.${K8S_VERSION#v1.}"
CACHE_ROOT="${E2E_CACHE:-$HOME/.cache/memgraph-hooks-e2e}"
ROOT="$CACHE_ROOT/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION"
BIN="$ROOT/bin"
SRC="$ROOT/src"
VGW_ROOT="$CACHE_ROOT/versitygw-$VERSITYGW_VERSION"

# Nothing but the Go module proxy: no VCS fallback, no toolchain downloads.
export GOPROXY="${E2E_GOPROXY:-https://proxy.golang.org}"
export GOTOOLCHAIN=local
# CGO_ENABLED=0 and -trimpath are the Dockerfile's settings, which the root package's test and
# the e2e hook binary build with: the standard library compiled for one serves the other.
export GOFLAGS="-buildvcs=false -trimpath"
export CGO_ENABLED=0
# No symbol table or DWARF: nobody debugs these binaries, and leaving them out takes about a
# third off linking (kube-apiserver: 20 s instead of 31 s) and 50 MB off each large binary.
# Stack traces keep their function names and lines (the pclntab stays).
STRIP="-s -w"

log() { echo "build.sh: $*" >&2; }

case "${1:-}" in
--print-bin-dir)
	echo "$BIN"
	exit 0
	;;
--print-versitygw-bin-dir)
	echo "$VGW_ROOT/bin"
	exit 0
	;;
esac

mkdir -p "$BIN" "$SRC"
# One build at a time per cache directory; a second caller waits and then reuses the result.
exec 9>"$ROOT/.lock"
flock 9

have() {
	local f
	for f in "$@"; do [[ -x "$BIN/$f" ]] || return 1; done
}

# new_wrapper DIR MODULE: a fresh wrapper module whose tools.go imports the given commands.
new_wrapper() {
	local dir=$1 mod=$2
	shift 2
	rm -rf "$dir"
	mkdir -p "$dir"
	(
		cd "$dir"
		go mod init "$mod" >/dev/null 2>&1
		{
			echo '//go:build tools'
			echo
			echo 'package tools'
			echo
			echo 'import ('
			local p
			for p in "$@"; do echo "	_ \"$p\""; done
			echo ')'
		} >tools.go
	)
}

# install_from DIR OUT: moves freshly built binaries from DIR into $BIN atomically.
install_from() {
	local dir=$1 f
	shift
	for f in "$@"; do
		mv -f "$dir/$f" "$BIN/$f.tmp"
		mv -f "$BIN/$f.tmp" "$BIN/$f"
	done
}

build_etcd() {
	have etcd && return 0
	log "building etcd $ETCD_VERSION"
	local dir="$SRC/etcd" m
	new_wrapper "$dir" e2e.local/etcd go.etcd.io/etcd/server/v3
	(
		cd "$dir"
		# etcd's go.mod files point at each other with ../ replaces; pin them all instead.
		for m in api/v3 client/pkg/v3 client/v3 pkg/v3 server/v3; do
			go mod edit -require="go.etcd.io/etcd/$m@$ETCD_VERSION" \
				-replace="go.etcd.io/etcd/$m=go.etcd.io/etcd/$m@$ETCD_VERSION"
		done
		go mod tidy
		mkdir -p out
		go build -ldflags "$STRIP" -o out/etcd go.etcd.io/etcd/server/v3
	)
	install_from "$dir/out" etcd
}

build_kwok() {
	have kwok && [[ -d "$ROOT/kwok-stage" ]] && return 0
	log "building kwok $KWOK_VERSION"
	local dir="$SRC/kwok" kdir
	new_wrapper "$dir" e2e.local/kwok sigs.k8s.io/kwok/cmd/kwok
	(
		cd "$dir"
		go mod edit -require="sigs.k8s.io/kwok@$KWOK_VERSION"
		go mod tidy
		mkdir -p out
		go build -ldflags "$STRIP -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" -o out/kwok sigs.k8s.io/kwok/cmd/kwok
	)
	kdir=$(cd "$dir" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
	rm -rf "$ROOT/kwok-stage.tmp"
	cp -r "$kdir/kustomize/stage" "$ROOT/kwok-stage.tmp"
	chmod -R u+w "$ROOT/kwok-stage.tmp"
	rm -rf "$ROOT/kwok-stage"
	mv "$ROOT/kwok-stage.tmp" "$ROOT/kwok-stage"
	install_from "$dir/out" kwok
}

build_kubernetes() {
	local cmds=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
	have "${cmds[@]}" && return 0
	log "building kubernetes $K8S_VERSION (${cmds[*]})"
	local dir="$SRC/kubernetes" gomod c staging pkgs=()
	for c in "${cmds[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
	new_wrapper "$dir" e2e.local/kubernetes "${pkgs[@]}"
	gomod=$(cd "$dir" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
		sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
	# Kubernetes requires its staging modules at v0.0.0 with ./staging replaces; point each
	# at its published version. The list comes from Kubernetes' own go.mod.
	mapfile -t staging < <(sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*#\1#p' "$gomod")
	[[ ${#staging[@]} -gt 0 ]] || { log "no staging modules found in $gomod"; exit 1; }
	local ver="k8s.io/component-base/version" cver="k8s.io/client-go/pkg/version" minor
	minor=$(echo "$K8S_VERSION" | cut -d. -f2)
	local ldflags="$STRIP -X $ver.gitVersion=$K8S_VERSION -X $ver.gitMajor=1 -X $ver.gitMinor=$minor -X $ver.gitTreeState=clean"
	ldflags+=" -X $cver.gitVersion=$K8S_VERSION -X $cver.gitMajor=1 -X $cver.gitMinor=$minor -X $cver.gitTreeState=clean"
	(
		cd "$dir"
		local s
		for s in "${staging[@]}"; do
			go mod edit -replace="$s=$s@$K8S_STAGING_VERSION"
		done
		go mod edit -require="k8s.io/kubernetes@$K8S_VERSION"
		go mod tidy
		mkdir -p out
		go build -ldflags "$ldflags" -o out/ "${pkgs[@]}"
	)
	install_from "$dir/out" "${cmds[@]}"
}

# build_versitygw builds the object store into its own cache directory, under its own lock.
build_versitygw() {
	[[ -x "$VGW_ROOT/bin/versitygw" ]] && return 0
	mkdir -p "$VGW_ROOT/bin"
	(
		flock 8
		[[ -x "$VGW_ROOT/bin/versitygw" ]] && exit 0
		log "building versitygw $VERSITYGW_VERSION"
		local dir="$VGW_ROOT/src"
		new_wrapper "$dir" e2e.local/versitygw github.com/versity/versitygw/cmd/versitygw
		cd "$dir"
		go mod edit -require="github.com/versity/versitygw@$VERSITYGW_VERSION"
		go mod tidy
		mkdir -p out
		go build -ldflags "$STRIP" -o out/versitygw github.com/versity/versitygw/cmd/versitygw
		mv -f out/versitygw "$VGW_ROOT/bin/versitygw.tmp"
		mv -f "$VGW_ROOT/bin/versitygw.tmp" "$VGW_ROOT/bin/versitygw"
	) 8>"$VGW_ROOT/.lock"
}

start=$(date +%s)
build_etcd
build_kwok
build_kubernetes
build_versitygw
log "done in $(($(date +%s) - start))s: $BIN"
echo "$BIN"
