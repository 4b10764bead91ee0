# browsergate: the two quick-start commands are `make demo` and `make test`.
export PATH := /usr/local/go/bin:$(PATH)

.PHONY: deps demo test bench build peers peers-tools bench-peers bench-load peerbench soak bench-remote bench-fleet

deps:
	@bash .ci/install-deps

build:
	go build -o browsergate ./cmd/browsergate

# A governed browsing session against the bundled demo site, with the
# evidence in demo-evidence.db; ends with the evidence timeline, verify and
# replay. The demo is built in only with the demo tag: the release binary
# (make build) carries neither the demo site nor its scripted agent.
demo: deps
	go run -tags demo ./cmd/browsergate demo

# The packages whose tests drive a real Chromium; every other package's
# tests run under the race detector.
BROWSER_PKGS := ./executor ./cmd/browsergate

# Unit, fuzz-seed and end-to-end tests (real Chromium, real bbolt, the real
# MCP client against the real binary), the packages without a browser under
# -race; and no knot of more than 20 of the executor's files (files that all
# use names declared in each other: docs/architecture.md).
test:
	@bash .ci/install-deps lab
	go vet ./...
	go vet -tags demo ./cmd/browsergate
	go run ./cmd/knots -max 20 ./executor
	go test -count=1 -race -timeout 10m $$(go list ./... | grep -v -x -e '.*/executor' -e '.*/cmd/browsergate')
	go test -count=1 -timeout 45m $(BROWSER_PKGS)

bench: deps
	go test -run '^$$' -bench . -benchtime 2s ./...

# browsergate against the MCP browser servers an agent would otherwise use
# (Playwright's and Chrome DevTools'), installed from npm into .peers/, on
# the same pages in the same run. Not part of the test suite (it needs
# npm); see docs/peers.md.
peerbench: deps
	@test -d .peers/node_modules/@playwright/mcp -a -d .peers/node_modules/chrome-devtools-mcp || \
		PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --prefix .peers \
		@playwright/mcp@0.0.83 chrome-devtools-mcp@1.11.0
	go mod download codeberg.org/readeck/go-readability/v2
	cd cmd/peerbench && go build -o ../../.peers/peerbench .

# Snapshot tokens, words present, navigate and snapshot timings.
peers: peerbench
	.peers/peerbench -repo . -peers .peers -runs 5

# What each server's tools list costs an agent's context, in tokens.
peers-tools: peerbench
	.peers/peerbench -repo . -peers .peers -scenario tools

# Speed side by side, each server with its own Chromium: cold starts, app
# flows, long documentation pages, peak memory (a Markdown table).
bench-peers: peerbench
	.peers/peerbench -repo . -peers .peers -runs 5 -scenario speed -pages go-spec,wikipedia,wikipedia-time-loops,mozilla-1,ietf-1

# Many agents at once: 1, 4, 16 and 64 agents for 30 s each on browsergate's
# daemon over HTTP and the peers' multi-client modes (a Markdown table).
bench-load: peerbench
	.peers/peerbench -repo . -peers .peers -scenario load -agents 1,4,16,64 -duration 30s -pages go-spec,wikipedia,wikipedia-time-loops,mozilla-1,ietf-1

# One daemon (the shipped policies, durable evidence) under 16 agents'
# mixed work over HTTP for SOAK_DURATION, every resource it could leak
# sampled each minute, then a least-squares slope per hour of each after
# the warm-up, and whether it rises beyond noise (a Markdown table; the
# samples in soak-<time>.csv). Fails when one does. See docs/load.md.
SOAK_DURATION ?= 1h
soak: deps
	go build -o .soak/browsergate ./cmd/browsergate
	go run ./cmd/soak -binary .soak/browsergate -policies policies -duration $(SOAK_DURATION)

# Browsers on other hosts (docs/performance.md, "Browsers on other
# hosts"): time per call with the browser on a pool host at DevTools round
# trips of 0, 2, 10 and 50 ms more (toxiproxy's latency toxics as the pool
# host's forwarder) beside a launched browser, the time to acquire a
# session's browser from each provider, and one daemon under 1, 4 and 16
# sessions at once. Root only (the hosts are network namespaces); not part
# of make test. toxiproxy's server is built from its Go module into .bench/.
TOXIPROXY_VERSION := v2.5.0
REMOTE_BENCH_COUNT ?= 3
bench-remote:
	@bash .ci/install-deps lab
	GOBIN=$(CURDIR)/.bench/toxiproxy go install github.com/Shopify/toxiproxy/v2/cmd/server@$(TOXIPROXY_VERSION)
	BROWSERGATE_TOXIPROXY=$(CURDIR)/.bench/toxiproxy/server go test -run '^$$' -bench 'BenchmarkRemoteCalls$$|BenchmarkRemoteAcquire$$' \
		-benchtime 10x -count $(REMOTE_BENCH_COUNT) -timeout 60m ./cmd/browsergate
	BROWSERGATE_TOXIPROXY=$(CURDIR)/.bench/toxiproxy/server go test -run '^$$' -bench 'BenchmarkRemoteCapacity$$' \
		-benchtime 2x -count $(REMOTE_BENCH_COUNT) -timeout 60m ./cmd/browsergate

# A fleet (docs/performance.md, "A fleet"): the evidence lag to PostgreSQL,
# what --evidence-ack central costs a real call, the checkpoint lag of the
# transparency log and of its bucket, calls a second with one and with two
# replicas behind HAProxy, and the failover time, as one Markdown table
# (cmd/fleetbench; the benchmarks' output on stderr). About 4 minutes;
# not part of make test.
bench-fleet:
	@bash .ci/install-deps fleet
	go run ./cmd/fleetbench
