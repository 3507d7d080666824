# memgraph-hooks — make targets. Each target is self-contained and documented by its `##`
# comment, which `make help` (a bare `make`) lists; add new ones below.

.DEFAULT_GOAL := help

GO             ?= go
CONTROLLER_GEN ?= $(GO) tool controller-gen
API_PATHS      := ./api/...
CRD_DIR        := manifests/crd
DEEPCOPY_FILE  := api/v1alpha1/zz_generated.deepcopy.go

# The image manifests/deployment.yaml runs (and, from it, every data pod's backup-agent sidecar).
IMAGE ?= memgraph-hooks:dev
# What `--version` says of an image: docker's build context has no .git for Go to read them from.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)

.PHONY: help
help: ## List the targets (a bare `make` does this and changes nothing).
	@echo "Usage: make TARGET [VAR=value ...]"
	@echo
	@awk 'BEGIN {FS = ":[^#]*## "} /^[a-z][a-z0-9-]*:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(firstword $(MAKEFILE_LIST))

.PHONY: manifests
manifests: ## Regenerate the CRD (manifests/crd) and the deepcopy code from the API types (api/v1alpha1).
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

.PHONY: build
build: ## Build the hook binary into bin/.
	$(GO) build -o bin/memgraph-hooks ./cmd/memgraph-hooks

.PHONY: plugin
plugin: ## Build the kubectl plugin into bin/ (put bin/ on PATH, then: kubectl memgraph status NAME).
	$(GO) build -o bin/kubectl-memgraph ./cmd/kubectl-memgraph

.PHONY: image
image: ## Build the hook's image IMAGE (memgraph-hooks:dev, what manifests/ runs) with docker; then kind load docker-image, or docker push.
	docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $(IMAGE) .

.PHONY: run
run: ## Run the hook against its built-in simulated Memgraph (on 127.0.0.1:18080, metrics on 127.0.0.1:19090).
	$(GO) run ./cmd/memgraph-hooks --simulate

FUZZTIME       ?= 5m
FUZZ_SMOKETIME ?= 1000x
FUZZFLAGS      ?=
# Every Fuzz* function of the module's packages, as package:Target, found in the test sources.
FUZZ_TARGETS = $(shell grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . | \
	sed -E 's|^\./(.*)/[^/]*_test\.go:func (Fuzz.*)|./\1:\2|' | sort -u)

# run_fuzz runs each target of FUZZ_TARGETS for $(1) and prints one line per target: its
# executions and result. A count-based run (1000x) that ends inside the baseline (a corpus cached
# in GOCACHE from longer runs) reports the corpus entries it ran instead. -fuzzminimizetime:
# minimizing each new input for the default 60 s would stall a short run.
define run_fuzz
	@set -e; log=$$(mktemp); trap 'rm -f "$$log"' EXIT; summary=""; \
	for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$name ($$pkg) for $(1)"; \
		if $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(1) -fuzzminimizetime 2s $(FUZZFLAGS) $$pkg >"$$log" 2>&1; \
		then result=ok; else result=FAILED; fi; \
		runs="$$(grep -o 'execs: [0-9]*' "$$log" | tail -1 | cut -d' ' -f2) execs"; \
		if [ "$$runs" = " execs" ]; then \
			runs="$$(grep -o 'baseline coverage: [0-9]*' "$$log" | tail -1 | cut -d' ' -f3) corpus entries"; fi; \
		summary="$$summary$$(printf '%-28s %-12s %24s  %s' $$name $$pkg "$$runs" $$result)\n"; \
		if [ $$result = FAILED ]; then cat "$$log"; printf "$$summary"; exit 1; fi; \
	done; printf "$$summary"
endef

.PHONY: fuzz
fuzz: ## Fuzz every target (hooks, memgraph parsers, planner, topology) for FUZZTIME each (default 5m); outside CI.
	$(call run_fuzz,$(FUZZTIME))

.PHONY: fuzz-smoke
fuzz-smoke: ## Fuzz every target for FUZZ_SMOKETIME (1000 executions) each: CI keeps the targets and their corpora working.
	$(call run_fuzz,$(FUZZ_SMOKETIME))

# The typed decode of a sync request (hooks/wire/, hooks/observe.go): never anything but an
# observation or a 400 naming where the problem is.
.PHONY: fuzz-decode
fuzz-decode: ## Fuzz the typed decode of POST /sync for FUZZTIME: every refusal is a 400 naming its JSON path; outside CI.
	$(GO) test -run '^$$' -fuzz '^FuzzTypedDecode$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./hooks/

.PHONY: unit
unit: ## Unit, simulator and hook scenario tests (race detector on).
	$(GO) test -race -count=1 -timeout 30m ./...

MONITORING_TEST := manifests/components/monitoring/test

# The monitoring component's checks live in a module of their own (they need the Prometheus
# server's PromQL parser); docs/observability.md describes them. CI runs the query checks;
# promtool's rule unit tests need promtool, whose cold build (3.5-10 min on 2 cores) does not fit
# CI's budget beside the control plane's, so they run in monitoring-rules. promtool is built once
# per machine into ~/.cache/memgraph-hooks-e2e, like the e2e control plane.
.PHONY: monitoring
monitoring: ## Alert and dashboard queries parse and read only metrics the hook or Memgraph 3.12 export; every alert has rule unit tests.
	cd $(MONITORING_TEST) && $(GO) test -count=1 -skip '^TestPromtoolRuleUnitTests$$' ./...

.PHONY: monitoring-rules
monitoring-rules: ## promtool's unit tests of every alert (builds promtool once per machine); outside CI.
	cd $(MONITORING_TEST) && PROMTOOL="$$(./build-promtool.sh)" $(GO) test -count=1 -run '^TestPromtoolRuleUnitTests$$' ./...

# A chaos soak after the suite, in the same test binary: CI_CHAOS_DURATION (3 minutes; 0 skips
# it) with the fixed CI_CHAOS_SEED, so a CI failure replays with the same choices. It takes
# 221-246 s of test time; docs/reliability.md ("CI's time") gives cold runs stage by stage.
CI_CHAOS_SEED ?= 11
CI_CHAOS_DURATION ?= 3m

.PHONY: e2e
e2e: ## End-to-end suite on a real kube-apiserver, etcd, controller-manager, scheduler and kwok, then a CI_CHAOS_DURATION (0: none) chaos soak with CI_CHAOS_SEED.
	e2e/tools/build.sh
	$(GO) test -tags e2e -count=1 -timeout 60m $$($(GO) list -tags e2e ./e2e/... | grep -v '/e2e$$')
	$(GO) test -tags e2e -count=1 -timeout 60m ./e2e/ -chaos-duration=$(CI_CHAOS_DURATION) -chaos-seed=$(CI_CHAOS_SEED)

FLEET ?= 50

.PHONY: load
load: ## FLEET (50) MemgraphClusters at once against the hook binary on the real control plane: convergence, no 5xx, the hook's peak RSS and CPU, steady state, drain; outside CI.
	e2e/tools/build.sh
	$(GO) test -tags e2e -count=1 -timeout 60m -v -run '^TestFleetLoad$$' ./e2e/ -fleet=$(FLEET) -fleet-drain

CHAOS_DURATION ?= 30m
CHAOS_SEED ?= $(shell date +%s)

.PHONY: chaos
chaos: ## Chaos soak on the real control plane: operations and faults at moments chosen from CHAOS_SEED for CHAOS_DURATION (30m), invariants throughout; outside CI.
	e2e/tools/build.sh
	$(GO) test -tags e2e -count=1 -timeout 6h -v -run '^TestChaosSoak$$' ./e2e/ -chaos-duration=$(CHAOS_DURATION) -chaos-seed=$(CHAOS_SEED)

# test starts e2e/tools/build.sh in the background, niced and in a process group of its own, so
# that a cold machine's control-plane and versitygw builds take the CPU the unit, monitoring and
# fuzz stages leave idle (module downloads, tests waiting) instead of following them, without
# slowing those stages: un-niced, it starved the hooks package's race tests into go test's
# 10-minute timeout on a loaded machine. e2e's own build.sh call then finds the binaries in the
# cache (or waits on its lock). build.sh's output is kept in a file and printed, whole, when it
# ends; its failure fails the run, and a failure of the other stages stops it.
.PHONY: test
test: ## What CI runs: unit tests, the monitoring component's checks, a few seconds of each fuzz target, stale-manifest check, then the e2e suite and a CI_CHAOS_DURATION chaos soak; the e2e binaries build meanwhile.
	@log=$$(mktemp); setsid nice -n 10 e2e/tools/build.sh >"$$log" 2>&1 & build=$$!; \
	trap 'kill -- -'$$build' 2>/dev/null; rm -f "'$$log'"' EXIT; \
	echo "e2e/tools/build.sh runs in the background (process group $$build); its output follows the unit stages"; \
	$(MAKE) --no-print-directory unit monitoring fuzz-smoke verify-manifests || exit $$?; \
	echo "waiting for e2e/tools/build.sh"; \
	if wait $$build; then sed 's/^/build.sh | /' "$$log"; else \
		sed 's/^/build.sh | /' "$$log"; echo "e2e/tools/build.sh failed" >&2; exit 1; fi; \
	$(MAKE) --no-print-directory e2e

BENCHCOUNT ?= 5

# Every figure that matters is a ratio measured in the same run (the machine's load varies):
# sync/bare-cpu is a converged sync's CPU over a bare encoding/json round trip of the same bytes
# (goal <= 1), hook/bare-rate the hook's HTTP syncs per CPU-second over a bare net/http server's
# (goal >= 1). docs/performance.md shows them.
.PHONY: bench
bench: ## Benchmarks: the Bolt client, the converged sync against a bare JSON round trip, a bounded HTTP load test, the cost of the Nodes in each request.
	$(GO) test -run '^$$' -bench . -benchmem ./memgraph/bolt/
	$(GO) test -run '^$$' -bench 'ConvergedSync|ShowInstancesFloor' -benchmem ./hooks/
	$(GO) test -run '^$$' -bench 'SyncVsBareJSON' -benchtime 2000x -count $(BENCHCOUNT) ./hooks/
	$(GO) test -run '^$$' -bench 'HTTPLoad' -benchtime 1x -count 3 ./hooks/
	$(GO) test -run '^$$' -bench 'SyncWithNodes' -benchtime 200x ./hooks/

BENCH_BASE ?= main

# The same ratios for the tree at BENCH_BASE (with this tree's benchmarks) and for this tree,
# alternately, so that both see the same machine; docs/performance.md's table comes from it.
.PHONY: bench-compare
bench-compare: ## make bench's ratios for BENCH_BASE (default main) and this tree, alternately in one run.
	@base=$$(mktemp -d) && trap 'rm -rf "$$base"' EXIT && \
	git archive $(BENCH_BASE) | tar -x -C "$$base" && \
	cp hooks/bench_test.go hooks/load_bench_test.go hooks/cputime_test.go hooks/golden_test.go hooks/apipods_test.go "$$base/hooks/" && \
	for round in 1 2 3; do for tree in "$$base" "$$PWD"; do \
		label=this; [ "$$tree" = "$$base" ] && label="$(BENCH_BASE)"; echo "== $$label (round $$round)"; \
		(cd "$$tree" && $(GO) test -run '^$$' -bench 'SyncVsBareJSON' -benchtime 2000x ./hooks/ | grep ^Benchmark && \
		 $(GO) test -run '^$$' -bench 'HTTPLoad' -benchtime 1x ./hooks/ | grep ^Benchmark) || exit 1; \
	done; done

.PHONY: property
property: ## The randomized hook property test at 10,000 sequences (CI runs 300).
	$(GO) test -count=1 -run TestRandomScalingNeverMisusesMemgraph -timeout 180m ./hooks/ -sequences=10000

.PHONY: lint
lint: ## gofmt and go vet.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags e2e ./e2e/...

.PHONY: hook-secrets
hook-secrets: ## Print the hook's TLS and token Secrets as YAML, without cert-manager: make -s hook-secrets | kubectl apply -f -
	@$(GO) run ./cmd/memgraph-hooks-secrets $(ARGS)
