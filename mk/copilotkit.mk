# The CopilotKit lane (tests/interop/test_copilotkit.py): @copilotkit/react-core 1.74 with what
# it needs (react, react-dom, zod, the @ag-ui/client 0.0.59 it pins) and esbuild, pinned by
# tests/interop/copilotkit/npm/package-lock.json, installed into
# $(CACHE)/npm/copilotkit-<key>, where esbuild bundles the lane's page (app.jsx, build.mjs)
# into page/. The key hashes the pins and the page's sources (copilotkit_support.py hashes the
# same files), so a change to either makes a new folder; a stamp marks a finished one. A failed
# install does not stop `make test`: the lane skips (fails under CI) saying how to install it.
CK_SRC := tests/interop/copilotkit
CK_KEYED := $(CK_SRC)/npm/package.json $(CK_SRC)/npm/package-lock.json $(CK_SRC)/app.jsx $(CK_SRC)/build.mjs
CK_DIR := $(CACHE)/npm/copilotkit-$(shell cat $(CK_KEYED) | sha256sum | cut -c1-12)

TEST_DEPS += copilotkit
.PHONY: copilotkit
copilotkit: $(CK_DIR)/.installed

$(CK_DIR)/.installed:
	@command -v npm >/dev/null || { [ "$(IS_ROOT)" = yes ] && flock /tmp/apt.lock apt-get install -y nodejs npm; } || true
	@command -v npm >/dev/null && { echo "copilotkit: installing CopilotKit 1.74 into $(CK_DIR)"; \
	 rm -rf '$(CK_DIR)' && mkdir -p '$(CK_DIR)' && cp $(CK_SRC)/npm/package.json $(CK_SRC)/npm/package-lock.json '$(CK_DIR)/' && \
	 npm ci --silent --no-audit --no-fund --prefix '$(CK_DIR)' && \
	 node $(CK_SRC)/build.mjs '$(CK_DIR)/node_modules' '$(CK_DIR)/page' && touch '$@'; } || \
	 echo "copilotkit: could not install CopilotKit or bundle the page (the lane will say so)"
