#!/usr/bin/env bash
# Regenerates the local API's server code from Modules/LocalAPI/openapi.yaml with
# swift-openapi-generator's command-line tool (1.14.3), built once into a scratch folder, and
# records the SHA-256 of the document, its configuration and the generated files in
# Generated/openapi.sha256 (LocalAPITests checks them). Run it after editing openapi.yaml and
# commit what it wrote. The build plugin is not used: CI's fresh build stays short.
set -euo pipefail
cd "$(dirname "$0")/../Modules/LocalAPI"
work="${TMPDIR:-/tmp}/multidoc-openapi-generator"
if [ ! -x "$work/.build/debug/swift-openapi-generator" ]; then
    # A package that only depends on the generator: SwiftPM fetches it the way it fetches the
    # project's own dependencies (a registry or mirror works where `git clone` cannot).
    rm -rf "$work"
    mkdir -p "$work/Empty"
    : > "$work/Empty/empty.swift"
    cat > "$work/Package.swift" <<'MANIFEST'
// swift-tools-version:5.9
import PackageDescription
let package = Package(
    name: "generator",
    dependencies: [.package(url: "https://github.com/apple/swift-openapi-generator", exact: "1.14.3")],
    targets: [.target(name: "Empty", path: "Empty")]
)
MANIFEST
    swift build --package-path "$work" --product swift-openapi-generator
fi
rm -f Generated/*.swift
"$work/.build/debug/swift-openapi-generator" generate --config openapi-generator-config.yaml --output-directory Generated openapi.yaml
sha256sum openapi.yaml openapi-generator-config.yaml Generated/*.swift > Generated/openapi.sha256
echo "generated: $(ls Generated | tr '\n' ' ')"
