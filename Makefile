# Courier — `make demo` and `make test` set up everything on a fresh machine (system packages included).
SWIFT        ?= swift
APT_PACKAGES := libxml2-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler libsqlite3-dev pkg-config
FUZZ_SECONDS ?= 30
# The differential schema test's Python (python-jsonschema, hypothesis-jsonschema), in a venv under .build/.
VENV         := .build/venv
VENV_PYTHON  := $(CURDIR)/$(VENV)/bin/python
VENV_STAMP   := $(VENV)/.installed
DIFF_REQUIREMENTS := Tests/Differential/requirements.txt
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps venv demo test consumer-check test-tsan bench bench-transfers fuzz schemas docs format-check clean

## deps: install the system libraries Courier builds on (apt-get update once, only when one is missing)
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y $$missing; \
	fi

## venv: the Python venv of the differential schema test (Tests/Differential/requirements.txt), installed
##       only when missing or when the requirements change; python3 and its venv module come from apt if absent
venv: $(VENV_STAMP)

$(VENV_STAMP): $(DIFF_REQUIREMENTS)
	@if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then \
		echo "installing: python3 python3-venv"; \
		$(SUDO) apt-get update && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y python3 python3-venv; \
	fi
	rm -rf $(VENV)
	python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r $(DIFF_REQUIREMENTS)
	touch $@

## demo: start the demo server in process and run the scripted tour (the `Demo/` package)
# The Demo/ package builds in the root package's build folder: the packages both depend on (SwiftNIO,
# AsyncHTTPClient, swift-crypto, GRDB, …) are built once, with the same flags, for both.
DEMO := --package-path Demo --scratch-path $(CURDIR)/.build

demo: deps
	$(SWIFT) run $(DEMO) courier demo

## test: build everything and run every test suite: the root package with every trait, then the `Demo/`
##       package (demo server, CLI, loopback integration tests), then the consumer check
test: deps venv
	$(SWIFT) build --enable-all-traits --build-tests
	COURIER_PYTHON=$(VENV_PYTHON) $(SWIFT) test --enable-all-traits --skip-build
	$(SWIFT) build $(DEMO) --build-tests
	COURIER_PYTHON=$(VENV_PYTHON) $(SWIFT) test $(DEMO) --skip-build
	$(MAKE) --no-print-directory consumer-check

## consumer-check: a package depending on the `Courier` product alone (default traits) resolves at most 3
##       packages; prints what each product's consumer resolves
consumer-check:
	Scripts/consumer-check.sh

# Single-threaded, CPU-bound suites (hostile inputs, differential tests) gain nothing from ThreadSanitizer and,
# ten times slower under it, starve the timing-sensitive pipeline suites beside them on two cores; `make test`
# runs them.
TSAN_SKIP := JSONHostileInputTests|XMLHostileInputTests|ProtobufHostileInputTests|ProtobufRawDecoderTests|ProtobufRawDifferentialTests|RegexEngineTests|RegexDifferentialTests|DifferentialValidationTests|ValidationLimitsTests|HostilePatternSchemaTests

## test-tsan: the root package's suites (every trait but AsyncHTTPClient, whose loopback suites live in
##       `Demo/`) under ThreadSanitizer
test-tsan: deps venv
	COURIER_PYTHON=$(VENV_PYTHON) COURIER_TSAN=1 $(SWIFT) test --sanitize=thread --scratch-path .build-tsan \
		--traits Security,Cache,Metrics,Tracing --skip '$(TSAN_SKIP)'


## bench: the release benchmarks on ordo-one/benchmark (the `Benchmarks/` package: one executable per group under
##        Benchmarks/Benchmarks/<Group>, Courier's light targets only, no NIO), each beside its peer (Foundation,
##        swift-protobuf, XMLCoder) in the same run; then Scripts/bench-table.py prints issue 14's ratio table from
##        the run's medians (and, below it, the same ratios from the fastest samples), every benchmark's time percentiles and mallocs per operation, and the hostile inputs
##        per byte. BENCH_TARGETS='JSON|XML' picks groups (Chain JSON Protobuf XML Schema Hostile; a regular
##        expression matching the whole name), BENCH_FILTER='5000' benchmarks whose name contains a match (e.g.
##        'json.decode.model|memory'). The run's export and notes:
##        Benchmarks/.build/bench-results/
BENCH_RESULTS := $(CURDIR)/Benchmarks/.build/bench-results
bench: deps
	rm -rf $(BENCH_RESULTS) && mkdir -p $(BENCH_RESULTS)
	COURIER_BENCH_NOTES=$(BENCH_RESULTS) $(SWIFT) package --package-path Benchmarks \
		--allow-writing-to-package-directory benchmark --no-progress --format jmh --path $(BENCH_RESULTS) \
		$(if $(BENCH_TARGETS),--target '$(BENCH_TARGETS)') $(if $(BENCH_FILTER),--filter '.*($(BENCH_FILTER)).*')
	BENCH_PARTIAL=$(if $(BENCH_TARGETS)$(BENCH_FILTER),1) python3 Scripts/bench-table.py $(BENCH_RESULTS)

## bench-transfers: peak memory growth of a 200 MB streamed upload and a 200 MB interrupted-then-resumed
##        download through the `courier` CLI (release build; CONFIGURATION=debug for a quicker build)
bench-transfers: deps
	Benchmarks/Transfers/transfer-memory.sh $(or $(CONFIGURATION),release)

## fuzz: build every libFuzzer target once, then run each for FUZZ_SECONDS, two at a time (one per core); each
##       run's output goes to Fuzz/corpus-work/<Target>.log, printed whole when the target fails
fuzz: deps
	Fuzz/run.sh --build
	@mkdir -p Fuzz/corpus-work
	@ls Fuzz/Sources | xargs -P 2 -I{} sh -c 'log=Fuzz/corpus-work/{}.log; \
		if FUZZ_SKIP_BUILD=1 Fuzz/run.sh {} $(FUZZ_SECONDS) >"$$log" 2>&1; then \
			echo "{}: clean, $$(grep -o "Done [0-9]* runs in [0-9]* second(s)" "$$log")"; \
		else cat "$$log"; echo "{}: FAILED (log: $$log)"; exit 1; fi'

## schemas: regenerate the committed protobuf descriptor sets in Schemas/
schemas: deps
	Schemas/generate.sh
	Schemas/embed.sh

## docs: every product's DocC documentation, built with the toolchain's docc, warnings as errors
##       (Scripts/docs.sh; .build/docs/<Product>/; TARGETS="Courier CourierSchema" picks)
docs: deps
	SWIFT=$(SWIFT) Scripts/docs.sh $(TARGETS)

# Every Swift file of the repository and its nested packages.
# Generated code (the OpenAPI test client) is the generator's, not ours.
FORMAT_PATHS := Package.swift Sources Tests Benchmarks Fuzz $(shell find Demo -name '*.swift' -not -path '*/Generated/*' -not -path '*/.build/*')

## format-check: swift-format's lint rules (.swift-format) on every Swift file, any finding an error. The layout
##       (indentation, line breaks) is the code's own and not checked: swift-format's pretty-printer cannot be
##       tuned to it, and reformatting would touch most files
format-check:
	$(SWIFT) format lint --strict --parallel --recursive --debug-disable-pretty-print \
		--configuration .swift-format $(FORMAT_PATHS)

clean:
	rm -rf .build .build-tsan Demo/.build Benchmarks/.build Fuzz/.build Fuzz/.build-fuzz Fuzz/corpus-work
