# tnf-layer build, test and benchmark entry points.
GO        ?= go
BIN       := $(CURDIR)/bin
GOFLAGS   ?= -trimpath
export GOFLAGS

.PHONY: all build test unit integration bench lint clean

all: build

build:
	$(GO) build -o $(BIN)/ ./agents/ocf-etcd ./cmd/etcd ./cmd/etcdctl

# Unit tests, then the integration tests that drive bin/ocf-etcd with real bin/etcd processes.
test: build lint
	$(GO) test -count=1 ./...
	TNF_BIN=$(BIN) $(GO) test -count=1 -tags integration -p 1 -timeout 20m ./test/...

bench: build
	TNF_BIN=$(BIN) $(GO) test -tags integration -run '^$$' -bench . -benchtime 1x -timeout 20m ./test/etcdagent/ | $(GO) run ./test/benchtable

lint:
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags integration ./test/...

clean:
	rm -rf $(BIN)
