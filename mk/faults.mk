# The fault lane's disk faults (tests/faults/test_disk_faults.py) loop-mount a small ext4 as
# root: mkfs.ext4 and e2fsck (e2fsprogs), mount, umount and findmnt (mount, util-linux).
TEST_DEPS += faults
.PHONY: faults
faults:
	@command -v mkfs.ext4 >/dev/null && command -v findmnt >/dev/null || { [ "$(IS_ROOT)" = yes ] && flock /tmp/apt.lock sh -c 'apt-get update -qq && apt-get install -y -qq e2fsprogs mount util-linux'; } || echo "e2fsprogs/mount missing: the disk-fault tests will skip (or fail under CI)"
