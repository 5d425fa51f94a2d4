# The page's script: ui/src plus the pinned npm packages (@ag-ui/client, @cfworker/json-schema),
# bundled once by esbuild into a committed file, so users (and CI) need no node. Run
# `make ui-bundle` after changing ui/; the npm packages live in $(CACHE), keyed by the pins.
# Not a test dependency: CI checks the committed bundle, it does not rebuild it.
UI_PINS := $(shell cat ui/package.json ui/package-lock.json 2>/dev/null | sha256sum | cut -c1-16)
UI_NPM := $(CACHE)/ui-npm-$(UI_PINS)
UI_BUNDLE := src/agui_chat/agui/server/_ui/app.js
.PHONY: ui-bundle
$(UI_NPM)/.installed: ui/package.json ui/package-lock.json
	mkdir -p $(UI_NPM)
	cp ui/package.json ui/package-lock.json $(UI_NPM)/
	cd $(UI_NPM) && npm ci --no-audit --no-fund --loglevel=error
	touch $@
ui-bundle: $(UI_NPM)/.installed
	node ui/build.mjs $(UI_NPM)/node_modules $(UI_BUNDLE)
