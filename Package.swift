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
        .executable(name: "glasses-relay", targets: ["glasses-relay"]),
        .library(name: "GlassesRelay", targets: ["GlassesRelay"]),
        .library(name: "GlassesLinkCore", targets: ["GlassesLinkCore"]),
        .library(name: "GlassesLinkNetwork", targets: ["GlassesLinkNetwork"]),
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

        // MARK: Shared media types (the leaf every layer builds on: frames, pixel buffers, HEVC framing, time)
        .target(name: "GlassesMedia", swiftSettings: strictSettings),
        // MARK: JSON (the leaf both readers of JSON build on: one value type with its writer, one parser with positions)
        .target(name: "GlassesJSON", swiftSettings: strictSettings),

        // MARK: Reports (the SVG plot writer and the run report: pure text in, HTML out, no I/O of its own)
        .target(name: "GlassesReport", dependencies: ["GlassesJSON"], swiftSettings: strictSettings),

        // MARK: Public contracts
        .target(name: "WearablesKit", dependencies: ["GlassesMedia"], swiftSettings: strictSettings),
        // The SmartSpectra contract without an engine, the embedded backend beside the engine, and the module apps
        // import (both together, so `SmartSpectraSDK.shared` works out of the box).
        .target(name: "SmartSpectraCore", dependencies: ["GlassesMedia", "GlassesJSON"], swiftSettings: strictSettings),
        .target(
            name: "EmbeddedVitals", dependencies: ["SmartSpectraCore", "VitalsEngine", "GlassesMedia"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "SmartSpectraInput", dependencies: ["SmartSpectraCore", "EmbeddedVitals"], swiftSettings: strictSettings
        ),

        // MARK: Internal building blocks
        // The link in layers, as swift-nio splits NIOCore from NIOPosix: the portable core (wire format, framing,
        // credit, heartbeats and clock exchange, the endpoint state machine, pairing, the in-process link; Foundation
        // and Synchronization only), then the POSIX sockets on top of it (which re-export the core).
        .target(name: "GlassesLinkCore", dependencies: ["WearablesKit", "GlassesMedia"], swiftSettings: strictSettings),
        .target(
            name: "GlassesLink",
            dependencies: [
                "GlassesLinkCore", "WearablesKit", "GlassesMedia",
                .target(name: "GlassesBluetooth", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: strictSettings
        ),
        // The core's transport on Apple's Network.framework (as NIOTransportServices beside NIOPosix): one file under
        // `#if canImport(Network)`, so an empty module on Linux; the phone relay dials the bridge with it. Its own
        // module keeps GlassesRelay transport-free, as on Linux (GlassesRelayPOSIX adds the POSIX one).
        .target(name: "GlassesLinkNetwork", dependencies: ["GlassesLinkCore", "WearablesKit"], swiftSettings: strictSettings),
        // Bluetooth RFCOMM's addresses and constants: the only user of CBlueZ, linked only on Linux.
        .target(name: "GlassesBluetooth", dependencies: ["CBlueZ"], swiftSettings: strictSettings),
        .target(
            name: "GlassesVideo",
            dependencies: ["CFFmpeg", "GlassesMedia"],
            swiftSettings: strictSettings
        ),
        // The embedded vitals engine: pure signal processing on pixel views, no dependencies.
        .target(name: "VitalsEngine", swiftSettings: strictSettings),

        // Lab Streaming Layer: liblsl loaded at run time (from an installed pylsl, or GLASSES_LSL_LIBRARY), never
        // linked; only `--lsl` and `check --reference lsl:` use it.
        .target(name: "GlassesLSL", swiftSettings: strictSettings),

        // MARK: The pipeline, then the commands on top of it
        // What both commands share: the exit-code table, argument walking, usage errors, the signal trap.
        .target(name: "CommandSupport", dependencies: ["CSignalPipe"], swiftSettings: strictSettings),
        // The signal trap's C handler (a handler may only write to a pipe; Swift never runs inside one).
        .target(name: "CSignalPipe", path: "Sources/CSignalPipe"),
        .target(
            name: "GlassesBridge",
            dependencies: [
                "WearablesKit", "GlassesLink", "GlassesVideo", "SmartSpectraInput", "GlassesMedia", "CommandSupport", "GlassesJSON",
                "VitalsEngine", "EmbeddedVitals",
            ],
            swiftSettings: strictSettings
        ),
        // `glasses-bridge check`: the plan, the runner, its evaluations and JUnit, over the pipeline's package API.
        .target(
            name: "GlassesCheck",
            dependencies: [
                "GlassesBridge", "WearablesKit", "GlassesLink", "GlassesVideo", "SmartSpectraInput", "CommandSupport", "GlassesJSON",
            ],
            swiftSettings: strictSettings
        ),
        // The command: parsing, help, the program run, scenario loading and the simulator wiring.
        .target(
            name: "GlassesBridgeCommand",
            dependencies: [
                "GlassesBridge", "GlassesCheck", "GlassesSimulator", "GlassesLink", "WearablesKit", "SmartSpectraInput",
                "CommandSupport", "GlassesReport", "GlassesLSL",
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "glasses-bridge",
            dependencies: ["GlassesBridgeCommand", "CommandSupport"],
            swiftSettings: strictSettings
        ),

        // MARK: The relay: DAT on one side, the link protocol on the other (a phone's relay; glasses-relay on Linux)
        // The relay core depends on the portable link core only; it takes its transport through `LinkTransport`.
        .target(
            name: "GlassesRelay",
            dependencies: ["WearablesKit", "GlassesLinkCore", "GlassesMedia"],
            swiftSettings: strictSettings
        ),
        // The relay over GlassesLink's POSIX sockets (what `glasses-relay` on Linux runs).
        .target(
            name: "GlassesRelayPOSIX",
            dependencies: ["GlassesRelay", "GlassesLink", "WearablesKit"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "glasses-relay",
            dependencies: [
                "GlassesRelay", "GlassesRelayPOSIX", "GlassesSimulator", "GlassesLink", "WearablesKit", "CommandSupport",
            ],
            swiftSettings: strictSettings
        ),

        // MARK: The simulated glasses
        .target(
            name: "GlassesSimulator",
            dependencies: ["WearablesKit", "GlassesLink", "GlassesVideo", "GlassesMedia", "GlassesJSON"],
            path: "Simulator/Sources/GlassesSimulator",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "glasses-sim",
            dependencies: ["GlassesSimulator", "GlassesLink", "GlassesVideo", "WearablesKit", "CommandSupport"],
            path: "Simulator/Sources/glasses-sim",
            swiftSettings: strictSettings
        ),

        // MARK: Benchmarks (run by Scripts/bench*, never by the tests)
        .executableTarget(
            name: "Benchmarks",
            dependencies: [
                "GlassesVideo", "GlassesSimulator", "VitalsEngine", "SmartSpectraInput", "WearablesKit", "GlassesBridge",
                "GlassesLink", "GlassesMedia", "GlassesRelay", "GlassesRelayPOSIX", "GlassesReport",
            ],
            swiftSettings: strictSettings
        ),

        // MARK: Tests, one target per module
        .testTarget(name: "WearablesKitTests", dependencies: ["WearablesKit"]),
        .testTarget(name: "GlassesLinkTests", dependencies: ["GlassesLink", "GlassesLinkCore", "WearablesKit"]),
        .testTarget(name: "GlassesVideoTests", dependencies: ["GlassesVideo", "SmartSpectraInput", "WearablesKit"]),
        .testTarget(name: "GlassesMediaTests", dependencies: ["GlassesMedia"]),
        .testTarget(name: "GlassesJSONTests", dependencies: ["GlassesJSON"]),
        .testTarget(name: "SmartSpectraCoreTests", dependencies: ["SmartSpectraCore", "GlassesMedia"]),
        .testTarget(name: "SmartSpectraInputTests", dependencies: ["SmartSpectraInput", "EmbeddedVitals", "GlassesMedia"]),
        .testTarget(
            name: "VitalsEngineTests",
            dependencies: ["VitalsEngine", "SmartSpectraInput", "GlassesSimulator", "GlassesVideo", "WearablesKit", "GlassesMedia"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "GlassesSimulatorTests",
            dependencies: ["GlassesSimulator", "WearablesKit", "GlassesLink", "GlassesVideo"],
            path: "Simulator/Tests/GlassesSimulatorTests"
        ),
        .testTarget(
            name: "GlassesBridgeTests",
            dependencies: [
                "GlassesBridge", "GlassesBridgeCommand", "GlassesCheck", "GlassesSimulator", "WearablesKit", "SmartSpectraInput",
                "GlassesLink", "GlassesVideo", "GlassesMedia", "GlassesRelay", "GlassesRelayPOSIX",
            ],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "GlassesBridgeCommandTests",
            dependencies: [
                "GlassesBridgeCommand", "GlassesBridge", "CommandSupport", "SmartSpectraInput", "WearablesKit", "GlassesLink",
                "GlassesLSL", "glasses-relay", "glasses-sim",
            ]
        ),
        .testTarget(name: "CommandSupportTests", dependencies: ["CommandSupport"]),
        .testTarget(
            name: "GlassesRelayTests",
            dependencies: [
                "GlassesRelay", "GlassesSimulator", "GlassesLink", "WearablesKit", "GlassesBridge", "GlassesBridgeCommand",
                "GlassesMedia",
            ],
            exclude: ["DATSurface", "AppleSurface"]
        ),
        .testTarget(name: "GlassesReportTests", dependencies: ["GlassesReport", "GlassesJSON"], exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
