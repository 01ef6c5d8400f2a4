import Foundation
import Testing

/// The relay's DAT client uses only the DAT 1.0 public surface, so the iOS build is not a guess: its files
/// typecheck against stand-in MWDATCore, MWDATCamera and MWDATMotion modules that declare exactly the surface quoted
/// in `../shared/reference/dat-sdk.md` §1 and `dat-1.0-extras.md` §1.1 (DATSurface/), and a file that reaches for a
/// WearablesKit-only member does not.
@Suite("DAT surface: the relay's DAT client compiles against DAT 1.0 alone", .serialized)
struct DATSurfaceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let surface = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("DATSurface")

    /// The files that must compile unchanged against Meta's SDK.
    static var relayFiles: [String] {
        ["Sources/GlassesRelay/DAT", "Sources/GlassesRelay/Model"].flatMap { folder -> [String] in
            let directory = root.appendingPathComponent(folder)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return names.filter { $0.hasSuffix(".swift") }.sorted().map { directory.appendingPathComponent($0).path }
        }
    }

    /// Runs swiftc; returns its exit status and output.
    static func swiftc(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swiftc"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Builds the stand-in modules into a fresh directory.
    static func buildSurface() throws -> URL {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("dat-surface-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for module in ["MWDATCore", "MWDATCamera", "MWDATMotion"] {
            let result = try swiftc([
                "-emit-module", "-parse-as-library", "-swift-version", "6", "-module-name", module,
                "-I", directory.path, "-module-cache-path", directory.appendingPathComponent("cache").path,
                "-emit-module-path", directory.appendingPathComponent("\(module).swiftmodule").path,
                surface.appendingPathComponent("\(module).swift").path,
            ])
            guard result.status == 0 else { throw SurfaceError(output: result.output) }
        }
        return directory
    }

    struct SurfaceError: Error { let output: String }

    static func typecheck(against modules: URL, extra: [String] = []) throws -> (status: Int32, output: String) {
        try swiftc([
            "-typecheck", "-parse-as-library", "-swift-version", "6", "-module-name", "RelayDATCheck",
            "-I", modules.path, "-module-cache-path", modules.appendingPathComponent("cache").path,
        ] + relayFiles + extra)
    }

    @Test("the DAT client and the relay model typecheck against MWDATCore, MWDATCamera and MWDATMotion as DAT 1.0 declares them")
    func compilesAgainstTheSurface() throws {
        #expect(Self.relayFiles.count >= 2, "\(Self.relayFiles)")
        let modules = try Self.buildSurface()
        defer { try? FileManager.default.removeItem(at: modules) }
        let result = try Self.typecheck(against: modules)
        #expect(result.status == 0, "\(result.output)")
        // The files really took the MWDAT branch: one that names a WearablesKit-only type next to them fails.
        let probe = modules.appendingPathComponent("probe.swift")
        try """
        #if canImport(MWDATCore)
            import MWDATCore
        #else
            import WearablesKit
        #endif
        func probe(_ session: DeviceSession) -> Any? { session.camera }
        """.write(to: probe, atomically: true, encoding: .utf8)
        let rejected = try Self.typecheck(against: modules, extra: [probe.path])
        #expect(rejected.status != 0)
        #expect(rejected.output.contains("has no member 'camera'"), "\(rejected.output)")
    }
}
