# Wikid: what a contributor runs. `make help` lists the targets.

GO       ?= go
BIN      ?= bin/wikid
FUZZTIME ?= 5s

.PHONY: help build run test e2e fuzz bench lint

help: ## list the targets
	@grep -E '^[a-z0-9]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-6s %s\n", $$1, $$2}'

build: ## build the binary into bin/wikid
	$(GO) build -o $(BIN) ./cmd/wikid

run: ## serve the wiki from ./data (go run)
	$(GO) run ./cmd/wikid serve

test: ## run the Go tests with the race detector
	$(GO) test -race ./...

# The browser test's files run two at a time: node's default on two cores
# is one, and the XSS corpus's file alone takes most of the run.
E2E_CONCURRENCY ?= 2

e2e: build ## run the browser test (needs /usr/bin/chromium)
	cd e2e && npm ci --no-audit --no-fund && WIKID_BIN=$(CURDIR)/$(BIN) node --test --test-concurrency=$(E2E_CONCURRENCY)

fuzz: ## run every fuzz target for FUZZTIME (default 5s)
	FUZZTIME=$(FUZZTIME) .ci/fuzz.sh

bench: ## run the benchmark harness against nginx (BENCHFLAGS=-smoke for a quick check)
	$(GO) run ./bench $(BENCHFLAGS)

lint: ## check formatting (gofmt) and run go vet
	@out=$$(find . -path ./.git -prune -o -path ./e2e -prune -o -name '*.go' -print | xargs gofmt -l); \
	if [ -n "$$out" ]; then echo "gofmt -w needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
