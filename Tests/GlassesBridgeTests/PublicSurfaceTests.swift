import Foundation
import Testing

/// `public` is what app developers get: the seeds' code (the DAT camera-streaming walkthrough, DAT 1.0's motion, audio
/// and standalone photo walkthroughs, SmartSpectra's
/// headless custom input and metrics samples, glasses frames into custom input, the pipeline embedded in an app)
/// type-checks against the built WearablesKit, SmartSpectraInput and GlassesBridge modules from outside the package
/// (no `-package-name`), so nothing it needs is `package` or internal. A probe that reaches for a `package` symbol
/// (the frame-rate gate, a formatter) fails the same way, as it should.
@Suite("Public surface: the seeds' code compiles against the public products alone", .serialized)
struct PublicSurfaceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let files = [
        "Tests/GlassesBridgeTests/Fixtures/PublicSurface/SeedSamples.swift",
        "Tests/WearablesKitTests/Walkthrough.swift",
        "Simulator/Tests/GlassesSimulatorTests/ExtrasWalkthrough.swift",
    ].map { root.appendingPathComponent($0).path }

    /// The build folder the running tests came from (debug, release or a sanitizer's), where the modules are.
    static var buildDirectory: URL {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = executable.deletingLastPathComponent()
        while folder.path != "/" {
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Modules/GlassesBridge.swiftmodule").path) { return folder }
            folder = folder.deletingLastPathComponent()
        }
        return root.appendingPathComponent(".build/debug")
    }

    /// `swiftc -typecheck` of `files` as a module of another package; its status and output.
    static func typecheck(_ files: [String]) throws -> (status: Int32, output: String) {
        let build = buildDirectory
        return try runTool("/usr/bin/env", [
            "swiftc", "-typecheck", "-parse-as-library", "-swift-version", "6", "-module-name", "AnApp",
            "-I", build.appendingPathComponent("Modules").path,
            "-I", root.appendingPathComponent("Sources/CFFmpeg").path, "-I", root.appendingPathComponent("Sources/CBlueZ").path,
            "-Xcc", "-fmodule-map-file=" + build.appendingPathComponent("CSignalPipe.build/module.modulemap").path,
            "-module-cache-path", FileManager.default.temporaryDirectory.appendingPathComponent("public-surface-cache-\(getpid())").path,
        ] + files)
    }

    @Test("the seeds' code type-checks from outside the package; a package symbol does not")
    func seedsCompileAgainstThePublicProducts() throws {
        let result = try Self.typecheck(Self.files)
        #expect(result.status == 0, "\(result.output)")
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("public-surface-probe-\(getpid()).swift")
        defer { try? FileManager.default.removeItem(at: probe) }
        try "import GlassesBridge\nfunc probe() { _ = FrameRateGate(askedRate: 24) }\n".write(to: probe, atomically: true, encoding: .utf8)
        let refused = try Self.typecheck(Self.files + [probe.path])
        #expect(refused.status != 0 && refused.output.contains("FrameRateGate"), "\(refused.output)")
    }
}
