// swift-tools-version:6.0
import PackageDescription

// MARK: - External dependencies

let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let serviceLifecycle: Target.Dependency = .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let grdb: Target.Dependency = .product(name: "GRDB", package: "GRDB.swift")
let hdrHistogram: Target.Dependency = .product(name: "Histogram", package: "hdrhistogram-swift")
let unixSignals: Target.Dependency = .product(name: "UnixSignals", package: "swift-service-lifecycle")
let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")
let cryptoExtras: Target.Dependency = .product(name: "_CryptoExtras", package: "swift-crypto")
let hummingbird: Target.Dependency = .product(name: "Hummingbird", package: "hummingbird")
let openAPIRuntime: Target.Dependency = .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")
let openAPIHummingbird: Target.Dependency = .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird")
let httpTypes: Target.Dependency = .product(name: "HTTPTypes", package: "swift-http-types")
let nioCore: Target.Dependency = .product(name: "NIOCore", package: "swift-nio")

let package = Package(
    name: "multidoc",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "multidoc", targets: ["multidoc"]),
        .executable(name: "multidoc-tui", targets: ["multidoc-tui"]),
        .executable(name: "multidocd", targets: ["multidocd"]),
        .library(name: "MultidocKit", targets: ["MultidocKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-generator", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // MARK: - Modules

        .target(name: "Model", path: "Modules/Model"),
        .target(name: "FileIO", dependencies: ["CFileSystem"], path: "Modules/FileIO"),
        .target(name: "Settings", dependencies: ["Model", "FileIO"], path: "Modules/Settings"),
        .target(name: "Storage", dependencies: ["Model", "FileIO", "Text", "CSQLiteConfig", grdb], path: "Modules/Storage"),
        .target(name: "Sync", dependencies: ["Model", "Storage", "FileIO", "Text", crypto, cryptoExtras], path: "Modules/Sync"),
        .target(
            name: "Engine",
            dependencies: ["Model", "FileIO", "Storage", "Sync", "Settings", "Text", logging, hdrHistogram, serviceLifecycle],
            path: "Modules/Engine"
        ),
        .target(
            name: "MultidocKit", dependencies: ["Engine", "Model", "Settings", "Storage", logging], path: "Modules/MultidocKit"
        ),
        // The daemon's local API: `openapi.yaml`, its server code generated at build time by
        // swift-openapi-generator's plugin, the handlers and the web page.
        .target(
            name: "LocalAPI",
            dependencies: ["MultidocKit", "Model", hummingbird, openAPIRuntime, openAPIHummingbird, httpTypes, nioCore, logging, serviceLifecycle],
            path: "Modules/LocalAPI",
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        .target(name: "Syncthing", dependencies: ["Sync", "Settings", logging], path: "Modules/Syncthing"),
        .target(name: "Text", dependencies: ["Model"], path: "Modules/Text"),
        .systemLibrary(name: "CNcurses", path: "Modules/CNcurses"),
        .target(name: "TerminalUI", dependencies: ["CNcurses"], path: "Modules/TerminalUI"),
        .systemLibrary(name: "CMalloc", path: "Modules/CMalloc"),
        .systemLibrary(name: "CFileSystem", path: "Modules/CFileSystem"),
        .systemLibrary(name: "CSQLiteConfig", path: "Modules/CSQLiteConfig"),
        .target(
            name: "AppSupport",
            dependencies: ["Model", "FileIO", "Settings", "Storage", "Sync", "Text", "Engine", "Syncthing", argumentParser, logging],
            path: "Modules/AppSupport"
        ),

        // MARK: - Apps

        .executableTarget(
            name: "multidoc",
            dependencies: ["AppSupport", "Engine", "Sync", "Storage", "Settings", "Model", "FileIO", argumentParser, logging],
            path: "Apps/multidoc"
        ),
        .executableTarget(
            name: "multidocd",
            dependencies: [
                "AppSupport", "Engine", "Sync", "Settings", "Syncthing", "Model", "FileIO", "CMalloc", "MultidocKit", "LocalAPI", argumentParser,
                logging, serviceLifecycle, unixSignals,
            ],
            path: "Apps/multidocd"
        ),
        .executableTarget(
            name: "multidoc-tui",
            dependencies: ["AppSupport", "Engine", "Storage", "Settings", "Sync", "Model", "TerminalUI", argumentParser, logging],
            path: "Apps/multidoc-tui"
        ),

        // MARK: - Tools

        .executableTarget(name: "multidoc-store-stress", dependencies: ["Storage", "Model", "Text"], path: "Tools/StoreStress"),
        .executableTarget(
            name: "multidoc-syncthing-bench", dependencies: ["Syncthing", "Engine", "Model"], path: "Tools/SyncthingBench"
        ),
        .executableTarget(name: "multidoc-storage-bench", dependencies: ["Storage", "Model", grdb], path: "Tools/StorageBench"),
        .executableTarget(
            name: "multidoc-bench",
            dependencies: ["Engine", "Sync", "Storage", "Settings", "Model", "FileIO", argumentParser, logging],
            path: "Tools/Bench"),
        .executableTarget(name: "multidoc-text-bench", dependencies: ["Text"], path: "Tools/TextBench"),
        .executableTarget(name: "multidoc-trace", dependencies: ["CMalloc", "Engine", "Text", argumentParser], path: "Tools/Trace"),

        // MARK: - Tests

        .target(name: "TestSupport", dependencies: ["Model", "Storage"], path: "Tests/TestSupport"),
        .testTarget(
            name: "AppSupportTests",
            dependencies: ["AppSupport", "Engine", "FileIO", "Settings", "Storage", "Model", "TestSupport", argumentParser, logging],
            path: "Tests/AppSupportTests"
        ),
        .testTarget(name: "ModelTests", dependencies: ["Model"], path: "Tests/ModelTests"),
        .testTarget(name: "TextTests", dependencies: ["Text", "TestSupport"], path: "Tests/TextTests"),
        .testTarget(name: "FileIOTests", dependencies: ["FileIO", "TestSupport"], path: "Tests/FileIOTests"),
        .testTarget(name: "SettingsTests", dependencies: ["Settings"], path: "Tests/SettingsTests"),
        .testTarget(
            name: "StorageTests",
            dependencies: ["Storage", "Model", "FileIO", "Text", "TestSupport", grdb],
            path: "Tests/StorageTests",
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "SyncTests", dependencies: ["Sync", "Storage", "Model", "FileIO", "Text", "TestSupport", crypto], path: "Tests/SyncTests"),
        .testTarget(
            name: "EngineTests",
            dependencies: ["Engine", "Sync", "Storage", "Settings", "Model", "FileIO", "TestSupport", "Text", logging],
            path: "Tests/EngineTests"
        ),
        .testTarget(name: "MultidocCLITests", dependencies: ["TestSupport", "Sync", "Model", "Text"], path: "Tests/MultidocCLITests"),
        .testTarget(
            name: "TUITests",
            dependencies: ["TestSupport", "Engine", "Storage", "Settings", "Model", "TerminalUI", logging],
            path: "Tests/TUITests"
        ),
        .testTarget(
            name: "DaemonTests",
            dependencies: ["TestSupport", "FileIO", "Engine", "Sync", "Storage", "Settings", "Model", logging],
            path: "Tests/DaemonTests"
        ),
        .testTarget(name: "MultidocKitTests", dependencies: ["MultidocKit", "Model", "TestSupport"], path: "Tests/MultidocKitTests"),
        .testTarget(
            name: "LocalAPITests", dependencies: ["TestSupport"], path: "Tests/LocalAPITests", exclude: ["Browser"]
        ),
        .testTarget(
            name: "ReliabilityTests",
            dependencies: ["Engine", "Sync", "Storage", "Settings", "Model", "TestSupport", logging],
            path: "Tests/ReliabilityTests"
        ),
        .testTarget(
            name: "SyncthingTests",
            dependencies: ["TestSupport", "Syncthing", "Engine", "Sync", "Storage", "Settings", "Model", logging],
            path: "Tests/SyncthingTests"
        ),
    ]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
