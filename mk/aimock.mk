# The mock-provider lane (tests/openai/test_aimock_*.py, tests/providers/): @copilotkit/aimock from
# npm, pinned in tests/openai/aimock/package.json, installed into
# $(CACHE)/npm/aimock-<hash of the pin> once and reused; a stamp marks a finished install.
# A failed install does not stop `make test`: the tests that need it skip, or fail under CI.
AIMOCK_PIN := tests/openai/aimock/package.json
AIMOCK_DIR := $(CACHE)/npm/aimock-$(shell sha256sum $(AIMOCK_PIN) | cut -c1-12)

TEST_DEPS += aimock
.PHONY: aimock
aimock: $(AIMOCK_DIR)/.installed

$(AIMOCK_DIR)/.installed: $(AIMOCK_PIN)
	@command -v npm >/dev/null || { [ "$(IS_ROOT)" = yes ] && flock /tmp/apt.lock apt-get install -y nodejs npm; } || true
	@command -v npm >/dev/null && { echo "aimock: installing @copilotkit/aimock into $(AIMOCK_DIR)"; \
	 rm -rf '$(AIMOCK_DIR)' && mkdir -p '$(AIMOCK_DIR)' && cp $(AIMOCK_PIN) '$(AIMOCK_DIR)/package.json' && \
	 npm install --silent --no-audit --no-fund --prefix '$(AIMOCK_DIR)' && touch '$@'; } || \
	 echo "aimock: could not install @copilotkit/aimock (the tests that need it will say so)"
