# tnf-layer build, test and benchmark entry points.
GO        ?= go
BIN       := $(CURDIR)/bin
GOFLAGS   ?= -trimpath
export GOFLAGS
# containers/image and storage without cgo: pure-Go OpenPGP, no btrfs or devicemapper drivers.
TAGS      := containers_image_openpgp exclude_graphdriver_btrfs exclude_graphdriver_devicemapper

.PHONY: all build kube-apiserver previous-release test test-one cluster-ci cluster-test chaos bench bench-failover bench-field bench-data demo lab lab-base lab-units boot-test boot-smoke boot-bench fuzz lint lint-vet clean ha-root-13 pacemaker-answers cluster-seeds

all: build

# The tools the tests run that do not follow this project's code (etcd and etcdctl 3.5, etcd 3.6,
# kube-apiserver) are built once per input and Go version into TOOLS_CACHE, outside the clone,
# and copied into bin/ (a copy, not a link: the tests know etcd's processes by their
# executable's path). The key is a hash of what decides the binary: the module's go.mod or
# go.sum (every version) and the sources.
TOOLS_CACHE ?= $(HOME)/.cache/tnf-layer/tools
GO_VERSION := $(shell $(GO) env GOVERSION)
toolkey = $(shell cat $(1) | sha256sum | cut -c1-16)-$(GO_VERSION)
ETCD35 := $(TOOLS_CACHE)/etcd-3.5-$(call toolkey,go.sum cmd/etcd/*.go cmd/etcdctl/*.go)
ETCD36 := $(TOOLS_CACHE)/etcd-3.6-$(call toolkey,tools/etcd-3.6/go.sum tools/etcd-3.6/*.go)
KUBE_APISERVER := $(TOOLS_CACHE)/kube-apiserver-$(call toolkey,tools/kube-apiserver/go.mod tools/kube-apiserver/go.sum)

# The HA stack the cluster scenarios run (test/cluster): PACEMAKER=2, the host's, Debian 12's
# (Pacemaker 2.1.5, pcs 0.11.5, Corosync 3.1.7); PACEMAKER=3, Debian 13's (Pacemaker 3.0.0, pcs
# 0.12, Corosync 3.1.9), from a Debian 13 tree tools/ha-root makes once into TOOLS_CACHE, whose
# /usr the nodes run instead of the host's (TNF_HA_ROOT).
PACEMAKER ?= 2
HA_ROOT_13 := $(TOOLS_CACHE)/ha-root-trixie-$(call toolkey,tools/ha-root/make-root.sh)
ifeq ($(PACEMAKER),3)
HA_ROOT := $(HA_ROOT_13)
HA_STACK := $(HA_ROOT_13)/ha-stack.versions
else ifneq ($(PACEMAKER),2)
$(error PACEMAKER=$(PACEMAKER): want 2 (Debian 12's HA stack, the host's) or 3 (Debian 13's))
endif

# The release in the repository (VERSION) with the commit as build metadata, stamped into every
# binary make builds, as build-layer stamps the agents it builds into a layer.
VERSION_STAMP := $(shell cat VERSION)+$(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)$(shell git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo .dirty)

build: $(ETCD35)/etcd $(ETCD36)/etcd
	$(GO) build -tags "$(TAGS)" -ldflags "-X github.com/tnf-layer/tnf-layer/internal/base/version.Version=$(VERSION_STAMP)" -o $(BIN)/ ./agents/ocf-etcd ./agents/tnf-etcd-agent ./agents/tnfctl ./agents/fence_tnf_poweroff ./agents/fence_tnf_redfish ./agents/tnf-fencing-alert ./cmd/build-layer ./test/redfish/cmd/redfish-emulator
	mkdir -p $(BIN)/etcd-3.6
	cmp -s $(ETCD35)/etcd $(BIN)/etcd || cp --remove-destination $(ETCD35)/etcd $(BIN)/etcd
	cmp -s $(ETCD35)/etcdctl $(BIN)/etcdctl || cp --remove-destination $(ETCD35)/etcdctl $(BIN)/etcdctl
	cmp -s $(ETCD36)/etcd $(BIN)/etcd-3.6/etcd || cp --remove-destination $(ETCD36)/etcd $(BIN)/etcd-3.6/etcd

# Built into a temporary folder and renamed: an interrupted build leaves no cache entry.
$(ETCD35)/etcd:
	rm -rf $(ETCD35).tmp && $(GO) build -o $(ETCD35).tmp/ ./cmd/etcd ./cmd/etcdctl && mv -T $(ETCD35).tmp $(ETCD35)

$(ETCD36)/etcd:
	rm -rf $(ETCD36).tmp && cd tools/etcd-3.6 && $(GO) build -o $(ETCD36).tmp/etcd . && mv -T $(ETCD36).tmp $(ETCD36)

# The previous release's agents, for the mixed-version scenarios (test/cluster release_test.go):
# the newest CHANGELOG entry that names a commit, built from that commit's tree (git archive)
# once per Go version into TOOLS_CACHE, stamped as make build stamps that tree (its VERSION and
# the commit; the commit alone before VERSION existed).
# A clone without that commit (a shallow one) builds nothing, says so, and those scenarios skip.
# (awk's "\043" is "#": GNU make before 4.3 takes a "#" inside $(shell) for a comment.)
PREVIOUS := $(shell awk '$$1 == "\043\043" && $$(NF-1) == "commit" { print $$2, substr($$NF, 1, length($$NF) - 1); exit }' CHANGELOG.md)
PREVIOUS_COMMIT = $(word 2,$(PREVIOUS))
PREVIOUS_BIN := $(TOOLS_CACHE)/tnf-layer-$(word 1,$(PREVIOUS))-$(word 2,$(PREVIOUS))-$(GO_VERSION)
previous-release:
	@if [ -x $(PREVIOUS_BIN)/tnfctl ]; then exit 0; fi; \
	if ! git cat-file -e $(PREVIOUS_COMMIT)^{commit} 2>/dev/null; then \
		echo "previous-release: commit $(PREVIOUS_COMMIT) (release $(word 1,$(PREVIOUS))) is not in this clone: the mixed-version scenarios will skip"; exit 0; fi; \
	rm -rf $(PREVIOUS_BIN).tmp $(PREVIOUS_BIN).src && mkdir -p $(PREVIOUS_BIN).src && \
	git archive -o $(PREVIOUS_BIN).src/tree.tar $(PREVIOUS_COMMIT) && tar -xf $(PREVIOUS_BIN).src/tree.tar -C $(PREVIOUS_BIN).src && \
	(cd $(PREVIOUS_BIN).src && stamp=$$(cat VERSION 2>/dev/null || true)+$(PREVIOUS_COMMIT) && \
		$(GO) build -tags "$(TAGS)" -ldflags "-X github.com/tnf-layer/tnf-layer/internal/base/version.Version=$${stamp#+}" \
		-o $(PREVIOUS_BIN).tmp/ ./agents/ocf-etcd ./agents/tnf-etcd-agent ./agents/tnfctl ./agents/fence_tnf_poweroff ./agents/tnf-fencing-alert) && \
	rm -rf $(PREVIOUS_BIN).src && mv -T $(PREVIOUS_BIN).tmp $(PREVIOUS_BIN)

# Kubernetes' own kube-apiserver at the release OpenShift 4.19 ships (1.32), for the API
# scenarios: a module of its own whose replace lines pin each staging module (k8s.io/api and
# the rest) to the matching v0.32 (the main module's v0.33 would lift them). 132 s on two cores
# with empty build caches, once per version. Stripped (the tests need no symbols), with the
# version it reports (/version) set as Kubernetes' own build sets it. With it, kubectl of the same
# release: the docs' `oc` lines run on it (test/cluster docsteps_test.go says why).
KUBE_VERSION = $(shell awk '$$1 == "k8s.io/kubernetes" {print $$2}' tools/kube-apiserver/go.mod)
KUBE_LDFLAGS = -s -w -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=$(word 1,$(subst ., ,$(KUBE_VERSION:v%=%))) \
	-X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(KUBE_VERSION:v%=%)))
# Only the tests need it (the API scenarios): build, demo and lab do not wait for it.
kube-apiserver: $(KUBE_APISERVER)/kube-apiserver
	mkdir -p $(BIN)
	cmp -s $(KUBE_APISERVER)/kube-apiserver $(BIN)/kube-apiserver || cp --remove-destination $(KUBE_APISERVER)/kube-apiserver $(BIN)/kube-apiserver
	cmp -s $(KUBE_APISERVER)/kubectl $(BIN)/kubectl || cp --remove-destination $(KUBE_APISERVER)/kubectl $(BIN)/kubectl

$(KUBE_APISERVER)/kube-apiserver:
	rm -rf $(KUBE_APISERVER).tmp && cd tools/kube-apiserver && $(GO) build -trimpath -ldflags="$(KUBE_LDFLAGS)" -o $(KUBE_APISERVER).tmp/ k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl && mv -T $(KUBE_APISERVER).tmp $(KUBE_APISERVER)

# Unit tests and the integration tests (tag "integration": real etcd processes, Pacemaker's
# tools, ocf-tester). Packages run side by side (-p 2, the cores): none shares a port, a folder or
# a namespace with another. Beside them, staticcheck at the lowest priority (it has no timings to
# disturb: it takes what the tests leave idle), and the etcd suites once more on etcd 3.6
# (tools/etcd-3.6), which newer releases ship, their lines marked [etcd 3.6] (test/etcdagent
# takes a block of loopback addresses of its own per run). The longest package,
# internal/build/buildlayer, runs its stand-in RHCOS build in a process of its own beside the
# rest of it (its tests build one after the other within a process: two buildah builds side by
# side in one process once lost a RUN step's output), started first, beside the vetting: on a
# fresh machine it debootstraps the lab base its package's tests share, which waits on the
# network more than on the cores. Last, alone, the two-node cluster scenarios of the seed's cold
# boot and node failure (test/cluster TNF_CLUSTER_SET=core), side by side: each has its own
# namespaces, folders and BMC emulator. The other scenarios CI runs are make cluster-ci's, every
# one make cluster-test's. With empty Go and test caches (the tools built) make test took 15.6
# minutes on 2026-11-27 (16.3 before the stand-in started first and the longest packages were
# named first), 8.1 with warm caches. The previous release's agents are built first:
# test/etcdagent runs them beside this release's.
STANDIN_TEST := TestStandInRHCOS
# The two longest packages, named first: go test starts packages in the order given, and these
# two side by side from the start end the pass sooner than in the alphabet's order (5 min 40 s
# instead of 6 min 15 s with warm caches, 2026-11-27).
LONGEST := ./test/etcdagent ./internal/build/buildlayer
CLUSTER_PARALLEL ?= 3
# make cluster-ci's scenarios run two at a time: three at a time loaded 2 cores past what the
# field's podman-etcd (TestGuestOnField, TestGuestFencingFails) stands, and each scenario took
# 1.74 times as long, so the run passed its 25 minutes (2026-12-07, docs/testing.md).
CLUSTER_CI_PARALLEL ?= 2
GOTEST = TNF_HA_ROOT=$(HA_ROOT) TNF_BIN=$(BIN) TNF_PREVIOUS_BIN=$(PREVIOUS_BIN) $(GO) test -count=1 -tags "integration $(TAGS)"
# failures ends a failed pass with what failed, last, where a CI log's tail shows it: the tests'
# messages (file:line) and the failed tests and packages, from the pass's whole output in $(1).
failures = { echo "== what failed (the whole output: $(1))"; \
	grep -E -e '^(\[[^]]*\] )?\s*\S+\.go:[0-9]+:|DATA RACE|panic:|gofmt needed|^\[staticcheck\] ' $(1) | head -20; \
	grep -E -e '--- FAIL|^(\[[^]]*\] )?FAIL' $(1) | head -20; exit 1; }
test: SHELL := /bin/bash
test: build previous-release $(HA_STACK)
	set -o pipefail; { \
	( set -o pipefail; $(GOTEST) -run '^$(STANDIN_TEST)$$' -timeout 20m ./internal/build/buildlayer/ 2>&1 | sed -u 's/^/[stand-in] /' ) & standin=$$!; \
	$(MAKE) --no-print-directory lint-vet; vet=$$?; \
	( set -o pipefail; nice -n 19 $(STATICCHECK) 2>&1 | sed -u 's/^/[staticcheck] /' ) & staticcheck=$$!; \
	( set -o pipefail; TNF_ETCD=$(BIN)/etcd-3.6/etcd $(GOTEST) -p 2 -timeout 10m ./test/etcdagent/ ./internal/node/etcd/etcdrun/podman/ 2>&1 | sed -u 's/^/[etcd 3.6] /' ) & etcd36=$$!; \
	$(GOTEST) -p 2 -timeout 20m -skip '^$(STANDIN_TEST)$$' $(LONGEST) $$($(GO) list -tags "integration $(TAGS)" ./... | grep -v -e '/test/cluster$$' $(LONGEST:./%=-e '/%$$')); packages=$$?; \
	wait $$etcd36; etcd36=$$?; wait $$standin; standin=$$?; wait $$staticcheck; staticcheck=$$?; \
	[ $$vet -eq 0 ] && [ $$packages -eq 0 ] && [ $$etcd36 -eq 0 ] && [ $$standin -eq 0 ] && [ $$staticcheck -eq 0 ]; \
	} 2>&1 | tee $(BIN)/make-test.log || $(call failures,$(BIN)/make-test.log)
	set -o pipefail; TNF_CLUSTER_SET=core $(GOTEST) -parallel $(CLUSTER_PARALLEL) -timeout 15m ./test/cluster/ 2>&1 | tee $(BIN)/make-test-cluster.log || $(call failures,$(BIN)/make-test-cluster.log)

# One package, or the tests of one package RUN matches, with the same tags and binaries:
# make test-one PKG=./test/cluster RUN='^TestNodeFailure$$'
PKG ?= ./...
RUN ?= .
test-one: build kube-apiserver previous-release $(HA_STACK)
	$(GOTEST) -v -run '$(RUN)' -timeout 40m $(PKG)

# The two-node cluster scenarios (test/cluster: real Corosync, Pacemaker, pcs, fence_redfish and
# etcd in network namespaces) that CI runs after make test: all but make test's (a cold boot,
# a node failure) and the longer ones marked onlyInClusterTest; among them the API's
# (kube-apiserver: the link cut, the kubelet's and etcd's failures...) and the previous release's.
cluster-ci: build kube-apiserver previous-release $(HA_STACK)
	TNF_CLUSTER_SET=ci $(GOTEST) -parallel $(CLUSTER_CI_PARALLEL) -timeout 40m ./test/cluster/

# The seed scenarios (a cold boot, a node failure) and the tools' answers, alone: CI runs them on
# Debian 13's stack (PACEMAKER=3) beside make test's and make cluster-ci's on the host's.
cluster-seeds: build $(HA_STACK)
	$(GOTEST) -parallel $(CLUSTER_PARALLEL) -run '^(TestColdBoot|TestNodeFailure|TestToolAnswers)$$' -timeout 15m ./test/cluster/

# Every cluster scenario.
cluster-test: build kube-apiserver previous-release $(HA_STACK)
	TNF_CLUSTER_SET=all $(GOTEST) -parallel $(CLUSTER_PARALLEL) -timeout 40m ./test/cluster/

# The randomized fault campaign (test/cluster TestChaos): CHAOS_CYCLES faults drawn from
# CHAOS_SEED (a fresh seed, logged, when empty) under a concurrent workload whose history is
# checked for linearizability. A failed campaign keeps its cluster folder (the evidence).
CHAOS_CYCLES ?= 20
CHAOS_SEED ?=
chaos: build $(HA_STACK)
	CHAOS_CYCLES=$(CHAOS_CYCLES) CHAOS_SEED=$(CHAOS_SEED) TNF_KEEP=1 TNF_HA_ROOT=$(HA_ROOT) TNF_BIN=$(BIN) $(GO) test -count=1 -v -tags "integration $(TAGS)" \
		-run '^TestChaos$$' -timeout $$((15 + 6 * $(CHAOS_CYCLES)))m ./test/cluster/

# DATA_GIB: the database sizes (GiB) of the large-data benchmarks; each needs about five times its
# size free under TMPDIR (both nodes' data and the copies moved aside). RESTORE_GIB: those of the
# restore's (BenchmarkRestoreLargeData), which fills a pair serving kube-apiserver: 33 minutes to
# 1 GiB here.
DATA_GIB ?= 0.5 1 2 4
RESTORE_GIB ?= 1

# Each run's raw output, with every run's log line, is kept in out/ beside the page's rows. The
# field's stack is make bench-field's alone.
bench: build kube-apiserver
	mkdir -p out
	TNF_BENCH_DATA_GIB="$(DATA_GIB)" TNF_BENCH_RESTORE_GIB="$(RESTORE_GIB)" TNF_BIN=$(BIN) $(GO) test -tags "integration $(TAGS)" -p 1 -v -run '^$$' -bench . -skip '^BenchmarkField' -benchtime 1x -timeout 240m ./test/etcdagent/ ./internal/build/buildlayer/ ./test/cluster/ | tee out/make-bench.log | $(GO) run ./test/benchtable -markdown docs/benchmarks/make-bench.md -summary README.md -commit $$(git describe --always --dirty)

# The failover rows alone, the API's beside etcd's: the cluster failovers, the planned reboots and
# the process faults of make bench (about 50 minutes); their rows of the page replace the earlier ones.
bench-failover: build kube-apiserver $(HA_STACK)
	mkdir -p out
	TNF_HA_ROOT=$(HA_ROOT) TNF_BIN=$(BIN) $(GO) test -tags "integration $(TAGS)" -v -run '^$$' -bench '^Benchmark(ClusterFailover|PlannedReboot|EtcdFault)$$' -benchtime 1x -timeout 150m ./test/cluster/ | tee out/make-bench-failover.log | $(GO) run ./test/benchtable -markdown docs/benchmarks/make-bench.md -summary README.md -commit $$(git describe --always --dirty)

# BenchmarkClusterFailover's, BenchmarkEtcdFault's and BenchmarkPlannedReboot's faults on
# OpenShift's own two-node stack on the same harness (test/cluster field_test.go: the operator's Pacemaker configuration, the real
# podman-etcd from ../shared/peers, etcd in podman), FIELD_RUNS runs per fault; its rows, beside
# the layer's, fill README's column "OpenShift's stack on the same harness". A fault the field's
# stack does not recover from is its row's figure (benchtable -keep-failed: "failed" and why),
# the other faults' rows are written all the same. -v keeps every run's log line (go test trims
# a benchmark's log to ten lines without it). FIELD_ETCD_MONITOR (empty: podman-etcd's own 30 s)
# sets its monitor interval, a tuning a guest could make: its rows then measure the tuning, not
# the stock stack (docs/benchmarks.md: Tunings on a guest).
FIELD_RUNS ?= 10
FIELD_ETCD_MONITOR ?=
bench-field: build kube-apiserver
	mkdir -p out
	TNF_FIELD_RUNS=$(FIELD_RUNS) TNF_FIELD_ETCD_MONITOR=$(FIELD_ETCD_MONITOR) TNF_BIN=$(BIN) $(GO) test -tags "integration $(TAGS)" -v -run '^$$' -bench '^BenchmarkField(Failover|EtcdFault|PlannedReboot)$$' -benchtime 1x -timeout $$((30 + 30 * $(FIELD_RUNS)))m ./test/cluster/ | tee out/make-bench-field.log | $(GO) run ./test/benchtable -keep-failed -markdown docs/benchmarks/make-bench.md -summary README.md -commit $$(git describe --always --dirty)

# The large-data rows alone; they replace the earlier ones.
bench-data: build kube-apiserver
	mkdir -p out
	TNF_BENCH_DATA_GIB="$(DATA_GIB)" TNF_BENCH_RESTORE_GIB="$(RESTORE_GIB)" TNF_BIN=$(BIN) $(GO) test -tags "integration $(TAGS)" -p 1 -v -run '^$$' -bench '^Benchmark(LargeData|GatherLargeData|RestoreLargeData)$$' -benchtime 1x -timeout 180m ./test/etcdagent/ ./test/cluster/ | tee out/make-bench-data.log | $(GO) run ./test/benchtable -markdown docs/benchmarks/make-bench.md -summary README.md -commit $$(git describe --always --dirty)

# The parsers of outside text with random inputs, each for FUZZTIME (make test runs their seeds
# only). A crash leaves its input under the package's testdata/fuzz: keep it there once fixed.
FUZZTIME ?= 30s
FUZZ := ./internal/node/pacemaker/pcmk:FuzzMembership ./internal/node/pacemaker/pcmk:FuzzStatusAttribute \
	./internal/node/pacemaker/pcmk:FuzzParseStatus ./internal/node/pacemaker/pcmk:FuzzParseLinks \
	./internal/node/etcd/etcdnode:FuzzParseRecord ./internal/node/etcd/etcdnode:FuzzParseTally \
	./internal/node/pacemaker/pcsconfig:FuzzNodeConfig ./internal/node/etcd/etcdrun/podman:FuzzLoadPod \
	./internal/node/fencing/bmc:FuzzReadPower ./internal/node/etcd/staticpod:FuzzInstallerEtcd \
	./internal/node/fencing/identity:FuzzParse
fuzz:
	@for t in $(FUZZ); do echo "== $$t"; $(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) "$${t%%:*}" || exit 1; done

# The agent end to end: two etcd members formed through start/promote, the leader's node
# fenced, the survivor serving alone on the notification, the fenced node rejoining.
demo: build
	@echo "== the etcd agent: two members, the leader's node fenced, the survivor alone, the rejoin"
	@TNF_BIN=$(BIN) $(GO) test -count=1 -tags "integration $(TAGS)" -run '^TestFailoverAndRejoin$$' -v ./test/etcdagent/ > $(BIN)/demo.log 2>&1 \
		|| { tail -40 $(BIN)/demo.log; echo "demo failed: the whole log is $(BIN)/demo.log"; exit 1; }
	@sed -n 's/.*story: *//p' $(BIN)/demo.log
	@echo "The agent's own log of each step: $(BIN)/demo.log. Next: the same on two nodes with Corosync,"
	@echo "Pacemaker and fencing through a BMC: make test-one PKG=./test/cluster RUN='^TestNodeFailure\$$\$$';"
	@echo "the OS layer built and pushed: make lab; how it all works: docs/design.md."

# The main job on the lab default (ci/lab.sh): a registry on loopback, the Debian 12 lab base,
# the lab layer built with buildah, pushed, verified, and its manifests, in out/.
STORE ?= /var/lib/tnf-layer/storage
export STORE
lab: build
	BUILD_LAYER=$(BIN)/build-layer ci/lab.sh

# What CI runs of the lab: the main job (make lab: the layer built, pushed and verified), then
# systemd-analyze and the links of the units in the image as pushed (TestUnitsInLabImage, no
# boot): 2 min 50 s with the lab base debootstrapped first (2026-12-07). The boots are boot-smoke's
# and boot-test's.
lab-units: lab
	$(BOOT_TEST) -run '^TestUnitsInLabImage$$'

# The QEMU boot tests (test/boot): the lab layer make lab pushed, booted on two TCG machines
# whose power belongs to the Redfish emulator. boot-smoke (before a release, and after a change
# to the units, the image or the first boot: 15 to 18 minutes, past what CI's 45 have left since
# 2026-12-07) is the units in the image, and the cold boot and node 2's power cut with the
# runtime the RHCOS layers run (podman),
# node 1 watched inert for one minute instead of three; the etcd crash in its container after
# them (158 s of boot-smoke's 1076, 2026-11-29) and the same story on the exec runtime
# (TestNodeFailures), which every cluster scenario runs, are in boot-test only.
# The handover from an installer's disk (TestInstallerHandover) runs kube-apiserver on the host.
BOOT_TEST = TNF_BIN=$(BIN) $(GO) test -count=1 -v -tags "boot $(TAGS)" -timeout 150m ./test/boot/
boot-test: lab kube-apiserver
	$(BOOT_TEST)

boot-smoke: lab kube-apiserver
	TNF_BOOT_INERT=1m $(BOOT_TEST) -run '^(TestUnitsInLabImage|TestPodmanRuntime)$$/^(cold_boot|node_failure)$$'

boot-bench: lab
	TNF_BIN=$(BIN) $(GO) test -tags "boot $(TAGS)" -v -run '^$$' -bench Boot -benchtime 1x -timeout 60m ./test/boot/ | $(GO) run ./test/benchtable -target "make boot-bench" -markdown docs/benchmarks/make-boot-bench.md -commit $$(git describe --always --dirty)

# What the HA tools answer to the layer's command lines, on each stack (test/cluster
# TestToolAnswers), written into internal/node/pacemaker/pcmk/testdata/answers, which pcmk's
# parsers and readers are tested against. Run it when a stack's packages change.
pacemaker-answers: build $(HA_ROOT_13)/ha-stack.versions
	for root in "" $(HA_ROOT_13); do \
		TNF_UPDATE_ANSWERS=1 TNF_HA_ROOT=$$root TNF_BIN=$(BIN) $(GO) test -count=1 -tags "integration $(TAGS)" -run '^TestToolAnswers$$' -timeout 10m ./test/cluster/ || exit 1; \
	done

# Debian 13's HA stack for PACEMAKER=3, made once (debootstrap, then the packages through apt).
ha-root-13: $(HA_ROOT_13)/ha-stack.versions
$(HA_ROOT_13)/ha-stack.versions:
	bash tools/ha-root/make-root.sh trixie $(HA_ROOT_13)

# The Debian 12 lab base (debootstrap, systemd, a kernel) in the build store; kept once built.
lab-base: build
	$(BIN)/build-layer lab-base --store $(STORE)

# gofmt, go vet and staticcheck (pinned) over every build tag's files, and the node half's unit
# tests under the race detector (the agents' watchers, locks and retries are concurrent; the
# integration suites stay off it, their timings are real). staticcheck runs with the build's
# GOFLAGS, so that it reads what go vet compiled (49 s instead of 189 s with empty caches);
# make test runs it beside the packages' tests, at the lowest priority.
STATICCHECK = $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags "integration boot $(TAGS)" ./...
lint: lint-vet
	$(STATICCHECK)

lint-vet:
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags "integration boot $(TAGS)" ./...
	$(GO) test -race -count=1 ./internal/node/... ./internal/base/... ./internal/clusterconfig/ ./agents/... ./test/chaos/ ./test/logline/ ./test/redfish/...

clean:
	rm -rf $(BIN)
