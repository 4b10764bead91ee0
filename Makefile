# browsergate: the two quick-start commands are `make demo` and `make test`.
export PATH := /usr/local/go/bin:$(PATH)

.PHONY: deps demo test bench build

deps:
	@bash .ci/install-deps

build:
	go build -o browsergate ./cmd/browsergate

# A governed browsing session against the bundled demo site, with the
# evidence in demo-evidence.db; ends with the evidence timeline and verify.
demo: deps
	go run ./cmd/browsergate demo

# Unit, fuzz-seed and end-to-end tests (real Chromium, real bbolt, the real
# MCP client against the real binary).
test: deps
	go vet ./...
	go test -count=1 -timeout 20m ./...

bench: deps
	go test -run '^$$' -bench . -benchtime 2s ./...
