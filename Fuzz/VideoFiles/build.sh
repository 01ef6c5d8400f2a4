#!/usr/bin/env bash
# Builds the VideoFiles libFuzzer target: the modules it needs (VitalsEngine, SmartSpectraInput, WearablesKit,
# GlassesVideo) compiled with coverage and AddressSanitizer, then linked with libFuzzer.
# Usage: Fuzz/VideoFiles/build.sh [OUTPUT]   (default .build/fuzz/fuzz-video-files)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
source Scripts/setup
out="${1:-$root/.build/fuzz/fuzz-video-files}"
work="$root/.build/fuzz/video-files"
mkdir -p "$work" "$(dirname "$out")"
flags=(-sanitize=fuzzer,address -swift-version 6 -enable-upcoming-feature ExistentialAny -parse-as-library -g -O
       -I "$work" -I Sources/CFFmpeg $(pkg-config --cflags-only-I libavcodec libavformat libavutil libswscale | sed 's/-I/-Xcc -I/g'))
module() {
    local name="$1"; shift
    swiftc "${flags[@]}" -module-name "$name" -emit-module -emit-module-path "$work/$name.swiftmodule" \
        -wmo -emit-object -o "$work/$name.o" "$@"
}
module VitalsEngine $(find Sources/VitalsEngine -name '*.swift' | sort)
module SmartSpectraInput $(find Sources/SmartSpectraInput -name '*.swift' | sort)
module WearablesKit $(find Sources/WearablesKit -name '*.swift' | sort)
module GlassesVideo $(find Sources/GlassesVideo -name '*.swift' | sort)
swiftc "${flags[@]}" -module-name FuzzVideoFiles Fuzz/VideoFiles/FuzzVideoFiles.swift \
    "$work"/VitalsEngine.o "$work"/SmartSpectraInput.o "$work"/WearablesKit.o "$work"/GlassesVideo.o \
    -use-ld=lld $(pkg-config --libs libavcodec libavformat libavutil libswscale) -o "$out"
echo "built $out"
