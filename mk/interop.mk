# The real-peer lane (tests/interop/): each Python peer in a virtualenv of its own, since the
# peers pin ag-ui-protocol 0.x (ours is 1.x), and the official TypeScript client from npm.
# Each goes into $(CACHE)/peers/<name>-<hash of its pins>, made once and reused; a stamp file
# marks a finished install, so an interrupted one is redone. A failed install does not stop
# `make test`: the tests that need the peer skip, or fail under CI, naming it.
PEER_PINS := $(wildcard tests/interop/peers/*.txt)
PEER_DIRS := $(foreach f,$(PEER_PINS),$(CACHE)/peers/$(basename $(notdir $(f)))-$(shell sha256sum $(f) | cut -c1-12))
TS_PIN := tests/interop/npm/package.json tests/interop/npm/package-lock.json
TS_DIR := $(CACHE)/peers/ts-client-$(shell cat $(TS_PIN) | sha256sum | cut -c1-12)
# The lane's tests find the cache here (tests/real_components.py).
export AGUI_CHAT_CACHE := $(CACHE)

TEST_DEPS += interop-peers
.PHONY: interop-peers
interop-peers: $(addsuffix /.installed,$(PEER_DIRS)) $(TS_DIR)/.installed

$(CACHE)/peers/%/.installed:
	@pins=tests/interop/peers/$$(echo '$*' | sed 's/-[0-9a-f]*$$//').txt; \
	 echo "interop: installing $$pins into $(CACHE)/peers/$*"; \
	 rm -rf '$(CACHE)/peers/$*' && $(PY) -m venv '$(CACHE)/peers/$*' && \
	 '$(CACHE)/peers/$*/bin/python' -m pip install --quiet --disable-pip-version-check -r "$$pins" && \
	 cp "$$pins" '$(CACHE)/peers/$*/pins.txt' && touch '$@' || \
	 echo "interop: could not install $$pins (the tests that need it will say so)"

$(TS_DIR)/.installed:
	@command -v npm >/dev/null || { [ "$(IS_ROOT)" = yes ] && flock /tmp/apt.lock apt-get install -y nodejs npm; } || true
	@command -v npm >/dev/null && { echo "interop: installing @ag-ui/client into $(TS_DIR)"; \
	 rm -rf '$(TS_DIR)' && mkdir -p '$(TS_DIR)' && cp $(TS_PIN) '$(TS_DIR)/' && \
	 npm ci --silent --no-audit --no-fund --prefix '$(TS_DIR)' && touch '$@'; } || \
	 echo "interop: could not install @ag-ui/client (the tests that need it will say so)"
