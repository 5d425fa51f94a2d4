# Chromium for the browser tests of the page AGUIServer(ui=True) serves (issue 20). Debian's
# package, driven by Playwright for Python through executable_path: Playwright never
# downloads a browser here (never run `playwright install`).
TEST_DEPS += chromium
.PHONY: chromium
chromium:
	@command -v chromium >/dev/null || { [ "$(IS_ROOT)" = yes ] && \
		{ flock /tmp/apt.lock apt-get update -qq && \
		  flock /tmp/apt.lock apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core; }; } || true
