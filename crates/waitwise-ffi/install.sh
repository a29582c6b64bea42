#!/usr/bin/env bash
# Installs the C library under a prefix:
#
#   PREFIX/lib/libwaitwise.so.VERSION      the shared object (SONAME libwaitwise.so.0)
#   PREFIX/lib/libwaitwise.so.0 -> libwaitwise.so.VERSION   what programs load
#   PREFIX/lib/libwaitwise.so   -> libwaitwise.so.0         what `-lwaitwise` links
#   PREFIX/lib/libwaitwise.a
#   PREFIX/include/waitwise.h
#   PREFIX/lib/pkgconfig/waitwise.pc, waitwise-static.pc
#
# Usage: crates/waitwise-ffi/install.sh PREFIX [BUILD_DIR]
#   BUILD_DIR holds the built libwaitwise.so and libwaitwise.a (default:
#   target/release of the workspace; build it with
#   `cargo build --release -p waitwise-ffi`). DESTDIR, if set, is put in
#   front of every installed path (for packagers); the .pc files still say
#   PREFIX. LIBDIR (default PREFIX/lib) and INCLUDEDIR (default
#   PREFIX/include) override the two directories. Run `ldconfig` after
#   installing into a system directory.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ $# -lt 1 || $# -gt 2 || $1 == -h || $1 == --help ]]; then
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" >&2
    exit 2
fi
prefix=$1
build_dir=${2:-$here/../../target/release}
libdir=${LIBDIR:-$prefix/lib}
includedir=${INCLUDEDIR:-$prefix/include}
destdir=${DESTDIR:-}
header=$here/include/waitwise.h

for f in "$build_dir/libwaitwise.so" "$build_dir/libwaitwise.a" "$header"; do
    if [[ ! -f $f ]]; then
        echo "install.sh: $f not found (build first: cargo build --release -p waitwise-ffi)" >&2
        exit 1
    fi
done

# The version and the ABI major come from the header, which a test keeps
# equal to the crate's version and the library's SONAME.
define() { sed -n "s/^#define $1 \\(.*\\)\$/\\1/p" "$header"; }
version=$(define WAITWISE_VERSION_STRING | tr -d '"')
abi=$(define WAITWISE_ABI_VERSION)
if [[ -z $version || -z $abi ]]; then
    echo "install.sh: no WAITWISE_VERSION_STRING / WAITWISE_ABI_VERSION in $header" >&2
    exit 1
fi

install -d "$destdir$libdir" "$destdir$libdir/pkgconfig" "$destdir$includedir"
install -m 755 "$build_dir/libwaitwise.so" "$destdir$libdir/libwaitwise.so.$version"
ln -sfn "libwaitwise.so.$version" "$destdir$libdir/libwaitwise.so.$abi"
ln -sfn "libwaitwise.so.$abi" "$destdir$libdir/libwaitwise.so"
install -m 644 "$build_dir/libwaitwise.a" "$destdir$libdir/libwaitwise.a"
install -m 644 "$header" "$destdir$includedir/waitwise.h"
for pc in waitwise waitwise-static; do
    sed -e "s|@PREFIX@|$prefix|g" -e "s|@LIBDIR@|$libdir|g" \
        -e "s|@INCLUDEDIR@|$includedir|g" -e "s|@VERSION@|$version|g" \
        "$here/$pc.pc.in" >"$destdir$libdir/pkgconfig/$pc.pc"
    chmod 644 "$destdir$libdir/pkgconfig/$pc.pc"
done
echo "installed libwaitwise $version (SONAME libwaitwise.so.$abi) under $destdir$prefix"
