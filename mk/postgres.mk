# PostgreSQL for the approval-store tests (tests/postgres_server.py runs initdb and postgres
# as the "postgres" user on 127.0.0.1; Debian puts the binaries in /usr/lib/postgresql/*/bin).
TEST_DEPS += postgres
.PHONY: postgres
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || { [ "$(IS_ROOT)" = yes ] && flock /tmp/apt.lock sh -c 'apt-get update -qq && apt-get install -y -qq postgresql'; } || echo "postgresql missing: the PostgreSQL tests will skip (or fail under CI)"
