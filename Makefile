# tnf-layer build, test and benchmark entry points.
GO        ?= go
BIN       := $(CURDIR)/bin
GOFLAGS   ?= -trimpath
export GOFLAGS
# containers/image and storage without cgo: pure-Go OpenPGP, no btrfs or devicemapper drivers.
TAGS      := containers_image_openpgp exclude_graphdriver_btrfs exclude_graphdriver_devicemapper

.PHONY: all build test cluster-test chaos bench demo lab lab-base boot-test boot-smoke boot-bench lint clean

all: build

build:
	$(GO) build -tags "$(TAGS)" -o $(BIN)/ ./agents/ocf-etcd ./agents/tnf-etcd-agent ./agents/tnfctl ./agents/fence_tnf_poweroff ./agents/tnf-fencing-alert ./cmd/build-layer ./cmd/etcd ./cmd/etcdctl ./test/redfish/cmd/redfish-emulator
	cd tools/etcd-3.6 && $(GO) build -o $(BIN)/etcd-3.6/etcd .

# Unit tests and the integration tests (tag "integration": real etcd processes, Pacemaker's
# tools, ocf-tester), one package at a time so their processes never compete for the 2 cores.
# The etcd suites run once more on etcd 3.6 (tools/etcd-3.6), which newer releases ship.
test: build lint
	TNF_BIN=$(BIN) $(GO) test -count=1 -tags "integration $(TAGS)" -p 1 -timeout 25m ./...
	TNF_BIN=$(BIN) TNF_ETCD=$(BIN)/etcd-3.6/etcd $(GO) test -count=1 -tags "integration $(TAGS)" -p 1 -timeout 10m ./test/etcdagent/ ./internal/node/etcd/etcdrun/podman/

# The two-node cluster scenarios alone (test/cluster: real Corosync, Pacemaker, pcs,
# fence_redfish and etcd in network namespaces), every one of them; make test runs all but the
# planned-stop scenarios marked onlyInClusterTest.
cluster-test: build
	TNF_CLUSTER_ALL=1 TNF_BIN=$(BIN) $(GO) test -count=1 -tags "integration $(TAGS)" -timeout 40m ./test/cluster/

# The randomized fault campaign (test/cluster TestChaos): CHAOS_CYCLES faults drawn from
# CHAOS_SEED (a fresh seed, logged, when empty) under a concurrent workload whose history is
# checked for linearizability. A failed campaign keeps its cluster folder (the evidence).
CHAOS_CYCLES ?= 20
CHAOS_SEED ?=
chaos: build
	CHAOS_CYCLES=$(CHAOS_CYCLES) CHAOS_SEED=$(CHAOS_SEED) TNF_KEEP=1 TNF_BIN=$(BIN) $(GO) test -count=1 -v -tags "integration $(TAGS)" \
		-run '^TestChaos$$' -timeout $$((15 + 6 * $(CHAOS_CYCLES)))m ./test/cluster/

bench: build
	TNF_BIN=$(BIN) $(GO) test -tags "integration $(TAGS)" -p 1 -run '^$$' -bench . -benchtime 1x -timeout 60m ./test/etcdagent/ ./internal/build/buildlayer/ ./test/cluster/ | $(GO) run ./test/benchtable

# The agent end to end: two etcd members formed through start/promote, the leader's node
# fenced, the survivor serving alone on the notification, the fenced node rejoining.
demo: build
	TNF_BIN=$(BIN) $(GO) test -count=1 -tags "integration $(TAGS)" -run '^TestFailoverAndRejoin$$' -v ./test/etcdagent/ \
		| grep -E 'exit [0-9]+ in|msg=(decision|"launching|"forcing|"moved|"learner)|^(--- |ok|PASS|FAIL)' | sed -e 's/^ *//'

# The main job on the lab default (ci/lab.sh): a registry on loopback, the Debian 12 lab base,
# the lab layer built with buildah, pushed, verified, and its manifests, in out/.
STORE ?= /var/lib/tnf-layer/storage
export STORE
lab: build
	BUILD_LAYER=$(BIN)/build-layer ci/lab.sh

# The QEMU boot tests (test/boot): the lab layer make lab pushed, booted on two TCG machines
# whose power belongs to the Redfish emulator. boot-smoke is the cold boot and node 2's power cut,
# once with each etcd runtime (exec, podman), with node 1 watched inert for one minute instead of
# three.
BOOT_TEST = TNF_BIN=$(BIN) $(GO) test -count=1 -v -tags "boot $(TAGS)" -timeout 150m ./test/boot/
boot-test: lab
	$(BOOT_TEST)

boot-smoke: lab
	TNF_BOOT_INERT=1m $(BOOT_TEST) -run '^(TestUnitsInLabImage|TestPivot|TestNodeFailures|TestPodmanRuntime)$$/^(cold_boot|node_failure|etcd_killed)$$'

boot-bench: lab
	TNF_BIN=$(BIN) $(GO) test -tags "boot $(TAGS)" -run '^$$' -bench Boot -benchtime 1x -timeout 60m ./test/boot/ | $(GO) run ./test/benchtable

# The Debian 12 lab base (debootstrap, systemd, a kernel) in the build store; kept once built.
lab-base: build
	$(BIN)/build-layer lab-base --store $(STORE)

lint:
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags "integration $(TAGS)" ./...
	$(GO) vet -tags "boot $(TAGS)" ./test/boot/

clean:
	rm -rf $(BIN)
