# memgraph-hooks — make targets. Each target is self-contained; add new ones below.

GO             ?= go
CONTROLLER_GEN ?= $(GO) tool controller-gen
API_PATHS      := ./topology/...
CRD_DIR        := manifests/crd
DEEPCOPY_FILE  := topology/zz_generated.deepcopy.go

.PHONY: manifests
manifests: ## Regenerate the CRD (manifests/crd) and the deepcopy code from topology's API types.
	$(CONTROLLER_GEN) object paths="$(API_PATHS)"
	$(CONTROLLER_GEN) crd paths="$(API_PATHS)" output:crd:dir=$(CRD_DIR)

.PHONY: verify-manifests
verify-manifests: ## Fail if the committed CRD or deepcopy code is stale (run `make manifests`).
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(CONTROLLER_GEN) crd paths="$(API_PATHS)" output:crd:dir=$$tmp/crd && \
	$(CONTROLLER_GEN) object paths="$(API_PATHS)" output:object:dir=$$tmp/object && \
	diff -ru $(CRD_DIR) $$tmp/crd && \
	diff -u $(DEEPCOPY_FILE) $$tmp/object/zz_generated.deepcopy.go && \
	echo "manifests are up to date" || \
	{ echo "generated files are stale: run 'make manifests' and commit the result" >&2; exit 1; }
