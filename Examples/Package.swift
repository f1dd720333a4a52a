// swift-tools-version:6.0
import PackageDescription

// Uses only MultidocKit's public API, as an app outside this repository would: `.ci/run` builds
// and runs it, so a change that breaks the library's users breaks the build.
let package = Package(
    name: "multidoc-examples",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "multidoc", path: "..")],
    targets: [
        .executableTarget(
            name: "SyncADocument",
            dependencies: [.product(name: "MultidocKit", package: "multidoc")],
            path: "Sources/SyncADocument"
        ),
    ]
)
