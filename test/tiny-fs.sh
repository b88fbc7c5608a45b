#!/bin/bash
#
# test/tiny-fs.sh
#	  Make (setup) or remove (teardown) a small file system at <dir>, for
#	  the disk-full TAP test (test/t/010_disk_full.pl), which puts
#	  temp_tablespaces on it and fills it.
#
# Usage, as root:
#	test/tiny-fs.sh setup <dir> [size_mb] [owner]
#	test/tiny-fs.sh teardown <dir>
#
# setup makes an ext4 image of size_mb megabytes (default 16) in <dir>.img,
# with no blocks reserved for root, mounts it on <dir> through a loop device
# and gives its root to owner (default postgres), so that a tablespace can
# be made in it.  ext4 accepts O_DIRECT, so compspill.enable_dio is tested
# for real.  Where no loop device can be had (a container without
# /dev/loop*), it mounts a tmpfs of the same size instead: disk full is
# still tested, but direct I/O only on Linux 6.6 and later (older tmpfs
# refuses O_DIRECT, and compspill goes on buffered with a NOTICE).  It prints
# what it mounted and how much is free.  teardown unmounts <dir>
# and removes it and the image; it is safe to run when nothing is mounted.
#
# TAP tests run as an unprivileged user and cannot mount, so run-tests.sh,
# which runs as root, calls this before prove and exports <dir> to the tests
# as COMPSPILL_TINY_FS.
#
set -uo pipefail

usage()
{
	echo "usage: $0 setup <dir> [size_mb] [owner] | teardown <dir>" >&2
	exit 2
}

[ $# -ge 2 ] || usage
action=$1
dir=$2
size_mb=${3:-16}
owner=${4:-postgres}
img="$dir.img"

case "$action" in
	setup)
		if [ "$(id -u)" -ne 0 ]; then
			echo "tiny-fs: setup needs root (mount)" >&2
			exit 1
		fi
		if mountpoint -q "$dir"; then
			echo "tiny-fs: $dir is already a mount point" >&2
			exit 1
		fi
		mkdir -p "$dir" || exit 1
		kind=
		rm -f "$img"
		if truncate -s "${size_mb}M" "$img" &&
			mkfs.ext4 -q -F -m 0 -L compspill-tiny "$img" 2>/dev/null &&
			mount -o loop "$img" "$dir" 2>/dev/null; then
			kind=ext4
		else
			rm -f "$img"
			echo "tiny-fs: could not mount an ext4 image, using tmpfs" >&2
			if mount -t tmpfs -o "size=${size_mb}m,mode=0700" compspill-tiny "$dir"; then
				kind=tmpfs
			fi
		fi
		if [ -z "$kind" ]; then
			echo "tiny-fs: could not mount a file system on $dir" >&2
			rmdir "$dir" 2>/dev/null
			exit 1
		fi
		rmdir "$dir/lost+found" 2>/dev/null
		chown "$owner:" "$dir" && chmod 700 "$dir" || exit 1
		echo "tiny-fs: $kind of ${size_mb}MB on $dir ($(df -k --output=avail "$dir" | tail -1 | tr -d ' ')kB free)"
		;;
	teardown)
		if mountpoint -q "$dir"; then
			# mount -o loop set the loop device to detach itself
			umount "$dir" || exit 1
		fi
		rm -f "$img"
		rmdir "$dir" 2>/dev/null
		exit 0
		;;
	*)
		usage
		;;
esac
