# Redis for the approval-store tests (tests/redis_server.py starts it on 127.0.0.1).
TEST_DEPS += redis
.PHONY: redis
redis:
	@command -v redis-server >/dev/null || { [ "$(IS_ROOT)" = yes ] && flock /tmp/apt.lock sh -c 'apt-get update -qq && apt-get install -y -qq redis-server'; } || echo "redis-server missing: the Redis tests will skip (or fail under CI)"
