// swift-tools-version:6.0
// GlassesBridge: smart-glasses camera streams into SmartSpectra-style custom input, on Linux.
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "GlassesBridge",
    products: [
        .library(name: "WearablesKit", targets: ["WearablesKit"]),
        .library(name: "SmartSpectraInput", targets: ["SmartSpectraInput"]),
        .library(name: "GlassesBridge", targets: ["GlassesBridge"]),
        .library(name: "GlassesSimulator", targets: ["GlassesSimulator"]),
        .executable(name: "glasses-bridge", targets: ["glasses-bridge"]),
        .executable(name: "glasses-sim", targets: ["glasses-sim"]),
    ],
    targets: [
        // MARK: C libraries (system-library targets; shims for macros live in the headers)
        .systemLibrary(
            name: "CFFmpeg",
            path: "Sources/CFFmpeg",
            pkgConfig: "libavcodec libavformat libavutil libswscale",
            providers: [.apt(["libavcodec-dev", "libavformat-dev", "libavutil-dev", "libswscale-dev"])]
        ),
        .systemLibrary(
            name: "CBlueZ",
            path: "Sources/CBlueZ",
            pkgConfig: "bluez",
            providers: [.apt(["libbluetooth-dev"])]
        ),

        // MARK: Public contracts
        .target(name: "WearablesKit", swiftSettings: strictSettings),
        .target(name: "SmartSpectraInput", dependencies: ["VitalsEngine"], swiftSettings: strictSettings),

        // MARK: Internal building blocks
        .target(
            name: "GlassesLink",
            dependencies: ["WearablesKit", "CBlueZ"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "GlassesVideo",
            dependencies: ["CFFmpeg", "WearablesKit", "SmartSpectraInput"],
            swiftSettings: strictSettings
        ),
        // The embedded vitals engine: pure signal processing on pixel views, no dependencies.
        .target(name: "VitalsEngine", swiftSettings: strictSettings),

        // MARK: The pipeline and the command
        .target(
            name: "GlassesBridge",
            dependencies: [
                "WearablesKit", "GlassesLink", "GlassesVideo", "SmartSpectraInput", "VitalsEngine", "GlassesSimulator",
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "glasses-bridge",
            dependencies: ["GlassesBridge"],
            swiftSettings: strictSettings
        ),

        // MARK: The simulated glasses
        .target(
            name: "GlassesSimulator",
            dependencies: ["WearablesKit", "GlassesLink", "GlassesVideo"],
            path: "Simulator/Sources/GlassesSimulator",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "glasses-sim",
            dependencies: ["GlassesSimulator", "GlassesLink"],
            path: "Simulator/Sources/glasses-sim",
            swiftSettings: strictSettings
        ),

        // MARK: Benchmarks (run by Scripts/bench*, never by the tests)
        .executableTarget(
            name: "Benchmarks",
            dependencies: ["GlassesVideo", "GlassesSimulator", "VitalsEngine", "SmartSpectraInput", "WearablesKit"],
            swiftSettings: strictSettings
        ),

        // MARK: Tests, one target per module
        .testTarget(name: "WearablesKitTests", dependencies: ["WearablesKit"]),
        .testTarget(name: "GlassesLinkTests", dependencies: ["GlassesLink", "WearablesKit"]),
        .testTarget(name: "GlassesVideoTests", dependencies: ["GlassesVideo", "SmartSpectraInput", "WearablesKit"]),
        .testTarget(name: "SmartSpectraInputTests", dependencies: ["SmartSpectraInput"]),
        .testTarget(
            name: "VitalsEngineTests",
            dependencies: ["VitalsEngine", "SmartSpectraInput", "GlassesSimulator", "GlassesVideo", "WearablesKit"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "GlassesSimulatorTests",
            dependencies: ["GlassesSimulator", "WearablesKit", "GlassesLink", "GlassesVideo"],
            path: "Simulator/Tests/GlassesSimulatorTests"
        ),
        .testTarget(
            name: "GlassesBridgeTests",
            dependencies: ["GlassesBridge", "GlassesSimulator", "WearablesKit", "SmartSpectraInput", "GlassesLink", "GlassesVideo"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
