#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fetch a Debian amd64 kernel package once and keep, under the cache dir,
#   CACHE/<package>/vmlinux       uncompressed ELF (QEMU boots it via PVH,
#                                 skipping the decompressor, slow under TCG)
#   CACHE/<package>/root/...      the unpacked package (modules)
#   CACHE/current                 symlink to the package dir in use
# Prints the package dir.  Offline, an already cached kernel is reused.
#   AGENTSBX_VM_CACHE   cache dir (default /var/cache/agentsbx-vm)
#   AGENTSBX_VM_KPKG    package to use (default: what linux-image-amd64 pulls)
#   AGENTSBX_VM_REFRESH=1  look for a newer package than the cached one
set -eu
cache=${AGENTSBX_VM_CACHE:-/var/cache/agentsbx-vm}
mkdir -p "$cache"
cd "$cache"
if [ -z "${AGENTSBX_VM_KPKG:-}" ] && [ "${AGENTSBX_VM_REFRESH:-0}" != 1 ] &&
	[ -f current/.complete ]; then
	readlink -f current
	exit 0
fi

die() { echo "get-kernel: $*" >&2; exit 1; }

pick_package() {
	if [ -n "${AGENTSBX_VM_KPKG:-}" ]; then
		echo "$AGENTSBX_VM_KPKG"; return
	fi
	# The running kernel's own package, when it is a Debian one.
	p="linux-image-$(uname -r)"
	if apt-cache show "$p" >/dev/null 2>&1; then echo "$p"; return; fi
	apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}

# Decompress the payload of a bzImage: the first stream that unpacks to an ELF.
extract_vmlinux() {
	img=$1 out=$2
	for fmt in 'xz|\xfd7zXZ\x00|xz -dc' 'zstd|\x28\xb5\x2f\xfd|zstd -dc' \
		   'gzip|\x1f\x8b\x08|gzip -dc'; do
		name=${fmt%%|*}; rest=${fmt#*|}; pat=${rest%%|*}; cmd=${rest#*|}
		command -v "${cmd%% *}" >/dev/null 2>&1 || continue
		for off in $(LC_ALL=C grep -obUaP "$pat" "$img" | head -3 | cut -d: -f1); do
			tail -c +$((off + 1)) "$img" | $cmd > "$out.tmp" 2>/dev/null || true
			if [ "$(head -c 4 "$out.tmp" | od -An -c | tr -d ' ')" = '177ELF' ]; then
				mv "$out.tmp" "$out"; echo "$name"; return 0
			fi
		done
	done
	rm -f "$out.tmp"
	return 1
}

pkg=$(pick_package)
if [ -z "$pkg" ]; then
	[ -L current ] && { readlink -f current; exit 0; }
	die "no linux-image package known to apt (run apt-get update)"
fi
dir=$cache/$pkg
if [ ! -f "$dir/.complete" ]; then
	rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
	if ! (cd "$dir.tmp" && apt-get download "$pkg" >download.log 2>&1); then
		[ -L current ] && [ -f current/.complete ] &&
			{ echo "get-kernel: download of $pkg failed, using cached $(readlink current)" >&2;
			  rm -rf "$dir.tmp"; readlink -f current; exit 0; }
		cat "$dir.tmp/download.log" >&2
		die "apt-get download $pkg failed"
	fi
	dpkg -x "$dir.tmp"/"$pkg"_*.deb "$dir.tmp/root"
	rm -f "$dir.tmp"/*.deb "$dir.tmp/download.log"
	vmlinuz=$(ls "$dir.tmp"/root/boot/vmlinuz-* | tail -1)
	extract_vmlinux "$vmlinuz" "$dir.tmp/vmlinux" >/dev/null ||
		echo "get-kernel: could not uncompress $vmlinuz; booting the bzImage (slower)" >&2
	touch "$dir.tmp/.complete"
	rm -rf "$dir" && mv "$dir.tmp" "$dir"
fi
ln -sfn "$pkg" current
echo "$dir"
