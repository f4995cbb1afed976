#!/usr/bin/env bash
# Packs the bigger-game experiment (scripts/nano/bigger-game.sh) for a machine with Node and a GPU
# but no `npm install`: pretrain.ts and wordle-measure.ts bundled into two plain-Node files, and the
# `webgpu` package (Dawn) with only its Linux x86-64 binary, about 23 MB in all.
#
#   scripts/nano/bundle-bigger-game.sh DIR        # then, on that machine: BUNDLE=DIR scripts/nano/bigger-game.sh OUT_DIR
set -euo pipefail
dir=${1:?usage: scripts/nano/bundle-bigger-game.sh DIR}
cd "$(dirname "$0")/../.."
mkdir -p "$dir/node_modules/webgpu/dist"
npx esbuild scripts/nano/pretrain.ts scripts/nano/wordle-measure.ts --bundle --platform=node --format=esm --target=node20 --external:webgpu --outdir="$dir" --log-level=warning
cp node_modules/webgpu/package.json node_modules/webgpu/index.js node_modules/webgpu/LICENSE.md "$dir/node_modules/webgpu/"
cp -r node_modules/webgpu/dist/linux-x64 "$dir/node_modules/webgpu/dist/"
du -sh "$dir"
