# Recon — run `make help` for the targets.
GO ?= go
PKGS ?= ./...
# The Go SDK is a module of its own (client/go.mod): ./... of the server's module stops at
# its go.mod, so every target that tests, vets or lints runs in client/ too.
CLIENT_PKGS ?= ./...

.PHONY: help run demo build test test-short halves lint bench bench-external bench-drivers crash-test failover-test screenshots cover clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

run: ## run the server on the embedded SQLite default with demo data (same as the README)
	$(GO) run ./cmd/recon serve --demo

build: ## build the recon binary into ./bin/recon
	$(GO) build -o bin/recon ./cmd/recon

# go test runs the packages in the order it is given them, two at a time on 2 cores. The
# ones whose tests take longest go first, when the whole module is tested: in alphabetical
# order statement (its memory tests run one at a time, on one core) and sqlstore started
# last and ran alone at the end while the small packages had long finished.
SLOW_PKGS ?= ./cmd/recon ./statement ./dashboard ./sqlstore
TEST_PKGS = $(if $(filter ./...,$(PKGS)),$(SLOW_PKGS) $(PKGS),$(PKGS))

# TEST_TIMEOUT bounds each package's test binary (go test's default is 10 minutes, which
# cmd/recon came near on a busy 2-core machine before its tests ran in parallel).
TEST_TIMEOUT ?= 15m

# The race detector watches Recon's code and every dependency but two that
# only compute: modernc.org's SQLite (C translated to Go: instrumenting its
# every memory access made the SQLite half of the suite cost 9 times the CPU)
# and bcrypt's blowfish (one password hash took 6 s instead of 0.3 s). Both
# still run in the tests; their callers' accesses are still watched.
RACE_EXEMPT ?= -gcflags='modernc.org/...=-race=false' -gcflags='golang.org/x/crypto/blowfish=-race=false'

# HALVES is where the test harnesses note whether the PostgreSQL and browser tests ran or
# were skipped (internal/testkit/halves.go); the last line of `make test` says which.
HALVES ?= $(or $(TMPDIR),/tmp)/recon-test-halves-$(shell id -u)

# The summary line of the halves (the `halves` target, and the end of `test` and `test-short`).
HALVES_SUMMARY = say() { if [ -e $(HALVES)/$$1-skipped ] && [ -e $(HALVES)/$$1-ran ]; then echo "$$2: ran in part, SKIPPED in part ($$3)"; \
	  elif [ -e $(HALVES)/$$1-skipped ]; then echo "$$2: SKIPPED ($$3)"; \
	  elif [ -e $(HALVES)/$$1-ran ]; then echo "$$2: ran"; \
	  else echo "$$2: none ran"; fi; }; \
	say postgres "test halves: PostgreSQL" "no PostgreSQL binaries: apt-get install postgresql, or set RECON_TEST_POSTGRES_URL"; \
	say browser "test halves: browser" "no chromium: apt-get install chromium, or set RECON_CHROMIUM"

test: ## run every test, with the race detector, on SQLite and PostgreSQL (the README's test command)
	@rm -rf $(HALVES) && mkdir -p $(HALVES)
	@status=0; \
	RECON_TEST_HALVES=$(HALVES) $(GO) test -race $(RACE_EXEMPT) -count=1 -timeout=$(TEST_TIMEOUT) $(TEST_PKGS) || status=$$?; \
	(cd client && $(GO) test -race -count=1 $(CLIENT_PKGS)) || status=$$?; \
	$(HALVES_SUMMARY); exit $$status

test-short: ## run the tests without the race detector
	@rm -rf $(HALVES) && mkdir -p $(HALVES)
	@status=0; \
	RECON_TEST_HALVES=$(HALVES) $(GO) test -count=1 -timeout=$(TEST_TIMEOUT) $(TEST_PKGS) || status=$$?; \
	(cd client && $(GO) test -count=1 $(CLIENT_PKGS)) || status=$$?; \
	$(HALVES_SUMMARY); exit $$status

halves: ## say whether the last test run's PostgreSQL and browser halves ran or were skipped
	@$(HALVES_SUMMARY)

# STATICCHECK is pinned: a new release's new checks must not fail CI on code that did not
# change. Raise it on purpose (and fix what it finds) in a commit of its own.
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

lint: ## go vet, gofmt and staticcheck (pinned, STATICCHECK_VERSION; CI runs it)
	$(GO) vet $(PKGS)
	cd client && $(GO) vet $(CLIENT_PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(STATICCHECK) $(PKGS)
	cd client && $(STATICCHECK) $(CLIENT_PKGS)

bench: ## run the benchmarks of docs/benchmarks.md (about 8 minutes) and print their figures
	$(GO) test -run='^$$' -bench='Extract' -benchtime=2s -cpu=1 -benchmem .
	$(GO) test -run='^$$' -bench=. -benchmem ./statement
	$(GO) test -run='^$$' -bench='IngestHTTP|RawInsert' -benchtime=60x ./cmd/recon
	$(GO) test -run='^$$' -bench='ListTransactions' -benchtime=2s -timeout=30m ./cmd/recon
	$(GO) test -run='^$$' -bench='Dispatch' -benchtime=20000x ./delivery
	$(GO) test -run='^$$' -bench='IPNLatency' -benchtime=1x ./cmd/recon
	$(GO) test -run='^$$' -bench='ImportMemory/ParseFunc' -benchtime=1x ./cmd/recon   # one sub-benchmark per process: peak RSS is per process
	$(GO) test -run='^$$' -bench='ImportMemory/Import/sqlite' -benchtime=1x ./cmd/recon
	$(GO) test -run='^$$' -bench='ImportMemory/Import/postgres' -benchtime=1x ./cmd/recon

ROWS ?= 200000
bench-external: ## the server as its own process, a load generator as another: ingestion, listing, IPN latency on SQLite and PostgreSQL (ROWS=1000000 for 1M)
	RECON_TEST_REQUIRE_POSTGRES=1 $(GO) test -tags external -run '^TestExternal$$' -count=1 -v -timeout 180m ./cmd/recon -args -rows=$(ROWS) $(ARGS)

bench-drivers: ## SQLite drivers on the transactions table: modernc.org/sqlite (the server's) against mattn/go-sqlite3 (cgo), ingestion and listing
	$(GO) test -tags driverbench -run '^TestDrivers$$' -count=1 -v -timeout 60m ./internal/driverbench -args -rows=$(ROWS)

screenshots: ## run the browser tests and write their screenshots into docs/img (needs chromium)
	RECON_SCREENSHOTS=$(CURDIR)/docs/img RECON_TEST_REQUIRE_CHROMIUM=1 $(GO) test -count=1 -run 'Browser' ./...

crash-test: ## the crash tests' long form (SQLite, PostgreSQL, two nodes; 5000 IPNs): SIGKILL, restart, print the recovery times
	RECON_CRASH_IPNS=5000 RECON_TEST_REQUIRE_POSTGRES=1 $(GO) test -count=1 -run 'TestCrashRecovery|TestCrashOfOneNode' -v -timeout 20m ./cmd/recon

failover-test: ## kill -9 the PostgreSQL primary of a pg_auto_failover formation under two recon nodes, twice; print the write outages (docs/deploy.md; needs pg_autoctl)
	$(GO) test -tags failover -count=1 -run '^TestFailover$$' -v -timeout 10m ./cmd/recon

cover: ## test coverage report in cover.out
	$(GO) test -count=1 -coverprofile=cover.out $(PKGS) && $(GO) tool cover -func=cover.out | tail -1

clean: ## remove build output and the local SQLite database with its key file
	rm -rf bin cover.out recon.db recon.db-wal recon.db-shm recon.db.key recon.db-migrate.lock
