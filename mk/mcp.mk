# MCP servers from npm for tests/mcp (issue 19): the official filesystem and everything servers,
# pinned, installed once into $(CACHE)/npm/mcp-<pins> and reused (tests/mcp/mcp_support.py finds them).
MCP_NPM_PINS := @modelcontextprotocol/server-filesystem@2026.8.31 @modelcontextprotocol/server-everything@2026.8.31
MCP_NPM_DIR := $(CACHE)/npm/mcp-2026.8.31-2026.8.31

TEST_DEPS += mcp-servers
.PHONY: mcp-servers
mcp-servers:
	@if [ ! -f "$(MCP_NPM_DIR)/.installed" ]; then \
	  command -v npm >/dev/null || { [ "$(IS_ROOT)" = yes ] && apt-get install -y nodejs npm; } || true; \
	  if command -v npm >/dev/null; then \
	    mkdir -p "$(MCP_NPM_DIR)" && \
	    npm install --silent --no-audit --no-fund --prefix "$(MCP_NPM_DIR)" $(MCP_NPM_PINS) && \
	    touch "$(MCP_NPM_DIR)/.installed"; \
	  else echo "npm is missing: the MCP npm server tests will skip (apt-get install npm)"; fi; \
	fi
