#!/usr/bin/env bash
# Release archives, reproducible from a commit: dist/omnidev_<version>_<os>_<arch>.tar.gz
# (.zip for windows), each holding omnidev (and, on linux, omnidev-sandbox beside it), LICENSE
# and README.md, and dist/omnidev_<version>_checksums.txt (sha256, for `sha256sum -c`).
#
# The same commit gives the same bytes: -trimpath, no cgo, no build id, and every archive entry
# dated by the commit (SOURCE_DATE_EPOCH) with owner and order fixed.
#
# Needs Go, GNU tar, gzip, zip and sha256sum (a Linux machine).
# Environment: VERSION (default: git describe), TARGETS (default: every os/arch below).
# A target that does not build is reported and the others are still built; the script then
# exits 1, so that a release never quietly lacks one.
set -euo pipefail
cd "$(dirname "$0")/.."

version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
targets=${TARGETS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
export CGO_ENABLED=0 TZ=UTC LC_ALL=C

dist=$PWD/dist
rm -rf "$dist"
mkdir -p "$dist"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

failed=()
for target in $targets; do
	os=${target%/*} arch=${target#*/}
	name=omnidev_${version}_${os}_${arch}
	dir=$work/$name
	mkdir -p "$dir"
	ext=
	[ "$os" = windows ] && ext=.exe
	cmds=(omnidev)
	# The helper is the init of Linux's namespaces; elsewhere omnidev never starts it.
	[ "$os" = linux ] && cmds+=(omnidev-sandbox)
	ok=1
	for cmd in "${cmds[@]}"; do
		if ! GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false \
			-ldflags "-s -w -buildid= -X main.version=$version" \
			-o "$dir/$cmd$ext" "./cmd/$cmd" 2>"$work/$name.err"; then
			echo "release: $target: go build ./cmd/$cmd failed:" >&2
			sed 's/^/    /' "$work/$name.err" >&2
			ok=0
			break
		fi
	done
	if [ $ok = 0 ]; then
		failed+=("$target")
		continue
	fi
	cp LICENSE README.md "$dir/"
	chmod 0755 "$dir" "$dir"/omnidev*
	chmod 0644 "$dir/LICENSE" "$dir/README.md"
	find "$dir" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
	if [ "$os" = windows ]; then
		(cd "$work" && find "$name" | sort | zip -q -X -D "$dist/$name.zip" -@)
	else
		tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner \
			--mtime="@$SOURCE_DATE_EPOCH" -cf - "$name" | gzip -n -9 >"$dist/$name.tar.gz"
	fi
	echo "release: dist/$(cd "$dist" && ls "$name".*)"
done

(cd "$dist" && find . -maxdepth 1 -name 'omnidev_*' ! -name '*_checksums.txt' -printf '%f\n' | sort |
	xargs -r sha256sum >"omnidev_${version}_checksums.txt")
echo "release: dist/omnidev_${version}_checksums.txt"

if [ ${#failed[@]} -gt 0 ]; then
	echo "release: FAILED: ${failed[*]} did not build; the archives above lack them" >&2
	exit 1
fi
