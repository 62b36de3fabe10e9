# bench's build. `make test` is what CI runs (.ci/run); `make demo` is the
# main job on a fresh clone.

export CGO_ENABLED := 0
GO      ?= go
# The version `bench version` prints and traces record. Outside a git
# checkout it is empty, and bench falls back to what the go command
# recorded (see cmd/bench/version.go).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
# Release builds: stripped of the symbol table and DWARF (-s -w), without
# local file system paths (-trimpath).
LDFLAGS := -s -w -X main.version=$(VERSION)
BIN     := bin/bench

.PHONY: all build test lint vet fmt bench fuzz demo demo-live clean test-servers test-local-model local-model release release-check

all: build

build: ## build bin/bench (stripped, versioned)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/bench

release: ## stripped release binaries for linux and darwin (amd64, arm64) in dist/, with SHA256SUMS
	@VERSION=$(VERSION) bash scripts/release.sh

release-check: ## build this machine's release binary, type-check the other targets
	@bash scripts/release.sh --check

test: lint release-check test-servers ## lint, release check, every test, then the model in the loop
	BENCH_LIBFAKETIME=$${BENCH_LIBFAKETIME:-$$(bash scripts/build-libfaketime.sh)} $(GO) test -count=1 ./...
	@$(MAKE) --no-print-directory test-local-model

test-local-model: build ## the local model server's tests, then record with the real model and replay without it (skipped, saying why, where it is not installed)
	@if command -v node >/dev/null; then bash scripts/local-model.sh test; else echo "node not found: the local model server's tests are skipped"; fi
	@BENCH=$(abspath $(BIN)) bash scripts/local-model-e2e.sh

local-model: ## install the local model (1.1 GB, once per machine): README, "Real model runs with no key"
	@bash scripts/local-model.sh install

test-servers: ## npm MCP servers the recorder tests run against (skipped without Node.js)
	@bash scripts/install-test-servers.sh

lint: vet ## gofmt, go vet and actionlint
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@bash scripts/actionlint.sh

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

bench: ## Go benchmarks, then every measurement script under scripts/bench
	$(GO) test -run '^$$' -bench . -benchmem ./...
	@for s in scripts/bench/*.sh; do [ -e "$$s" ] || continue; echo "== $$s"; bash "$$s" || exit 1; done

FUZZTIME ?= 60s
fuzz: ## run every fuzz target for FUZZTIME each
	@$(GO) list -f '{{.ImportPath}} {{.Dir}}' ./... | while read pkg dir; do \
	  for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/func //'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; done

demo: build ## the main job: see README
	@bash scripts/demo.sh

demo-live: build ## the main job with a real language model, offline (installs it first if needed)
	@bash scripts/demo-live.sh

clean:
	rm -rf bin .bench
