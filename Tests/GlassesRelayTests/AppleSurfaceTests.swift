import Foundation
import Testing

/// Every Apple-only file is type-checked here, on Linux, against stand-in modules that declare exactly the API those
/// files use, each declaration quoted from Apple's (or, for DAT, Meta's) documentation (AppleSurface/, DATSurface/):
///
/// - `GlassesRelay` is built as the iOS app builds it, where `MWDATCore` and `CoreMedia` exist: its DAT client against
///   the stand-in DAT modules and its CoreMedia frame adapter (`RelayFrameAdapter+CoreMedia.swift`) against the
///   stand-in CoreMedia and CoreVideo, together with the rest of the relay core;
/// - `GlassesLinkNetwork` (the Network.framework transport) against the stand-in Network;
/// - every file under `Relay/` (the SwiftUI shell) against the stand-in SwiftUI, the toolchain's own Observation, and
///   the two modules above.
///
/// A probe that calls API the stand-ins do not declare fails, so a call outside them fails this suite. The link core
/// and its leaves come from this build's own modules (`swift build` puts them in the build folder's `Modules`).
@Suite("Apple surface: the Network transport, the CoreMedia adapter and the SwiftUI shell typecheck", .serialized)
struct AppleSurfaceTests {
    static let root = DATSurfaceTests.root
    static let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let appleSurface = here.appendingPathComponent("AppleSurface")
    static let datSurface = here.appendingPathComponent("DATSurface")

    /// The Swift files under `folder` (relative to the repository), recursively, sorted.
    static func swiftFiles(under folder: String) -> [String] {
        let directory = root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(atPath: directory.path) else { return [] }
        var files: [String] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") {
            files.append(directory.appendingPathComponent(relative).path)
        }
        return files.sorted()
    }

    /// This build's folder (the one holding the test binary and `Modules`), and the package name SwiftPM gave its
    /// modules (needed to see `package` declarations): read from the build description beside it.
    static func build() throws -> (modules: URL, packageName: String) {
        let candidates = [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])]
            .compactMap { $0?.deletingLastPathComponent() }
            + [root.appendingPathComponent(".build/debug")]
        guard let folder = candidates.first(where: {
            FileManager.default.fileExists(atPath: $0.appendingPathComponent("Modules/GlassesLinkCore.swiftmodule").path)
        }) else { throw SurfaceError(output: "no Modules/GlassesLinkCore.swiftmodule beside \(candidates)") }
        let configuration = folder.resolvingSymlinksInPath().lastPathComponent  // debug or release
        let description = folder.resolvingSymlinksInPath().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("\(configuration).yaml")
        var packageName = root.lastPathComponent.lowercased()
        if let text = try? String(contentsOf: description, encoding: .utf8),
           let range = text.range(of: #""-package-name",""#) {
            packageName = String(text[range.upperBound...].prefix { $0 != "\"" })
        }
        return (folder.appendingPathComponent("Modules"), packageName)
    }

    struct SurfaceError: Error, CustomStringConvertible {
        let output: String
        var description: String { output }
    }

    static func swiftc(_ arguments: [String], in directory: URL) throws -> (status: Int32, output: String) {
        try DATSurfaceTests.swiftc(
            ["-parse-as-library", "-swift-version", "6", "-I", directory.path,
             "-module-cache-path", directory.appendingPathComponent("cache").path] + arguments)
    }

    /// Emits `module` from `sources` into `directory`; throws with the compiler's output when that fails.
    static func emit(_ module: String, _ sources: [String], in directory: URL, extra: [String] = []) throws {
        let result = try swiftc(
            ["-emit-module", "-module-name", module,
             "-emit-module-path", directory.appendingPathComponent("\(module).swiftmodule").path] + extra + sources,
            in: directory)
        guard result.status == 0 else { throw SurfaceError(output: "\(module):\n\(result.output)") }
    }

    /// The stand-ins, then GlassesRelay and GlassesLinkNetwork built against them, in a fresh directory.
    static func buildModules() throws -> (directory: URL, packageName: String) {
        let (modules, packageName) = try build()
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("apple-surface-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Only the leaves the Apple files import come from the build (not its GlassesRelay, built against
        // WearablesKit instead of DAT).
        for module in ["GlassesLinkCore", "WearablesKit", "GlassesMedia"] {
            try FileManager.default.createSymbolicLink(
                at: directory.appendingPathComponent("\(module).swiftmodule"),
                withDestinationURL: modules.appendingPathComponent("\(module).swiftmodule"))
        }
        let apple = { (name: String) in appleSurface.appendingPathComponent("\(name).swift").path }
        try emit("CoreVideo", [apple("CoreVideo")], in: directory)
        try emit("CoreMedia", [apple("CoreMedia")], in: directory)
        try emit("AVFAudio", [apple("AVFAudio")], in: directory)
        try emit("Network", [apple("Network")], in: directory)
        try emit("SwiftUI", [apple("SwiftUI")], in: directory)
        try emit("MWDATCore", [datSurface.appendingPathComponent("MWDATCore.swift").path], in: directory)
        try emit("MWDATCamera", [datSurface.appendingPathComponent("MWDATCamera.swift").path,
                                 apple("MWDATCamera+CoreMedia")], in: directory)
        try emit("MWDATMotion", [datSurface.appendingPathComponent("MWDATMotion.swift").path], in: directory)
        let repository = ["-package-name", packageName, "-enable-upcoming-feature", "ExistentialAny"]
        try emit("GlassesRelay", swiftFiles(under: "Sources/GlassesRelay"), in: directory, extra: repository)
        try emit("GlassesLinkNetwork", swiftFiles(under: "Sources/GlassesLinkNetwork"), in: directory, extra: repository)
        return (directory, packageName)
    }

    static func typecheckShell(in directory: URL, extra: [String] = []) throws -> (status: Int32, output: String) {
        try swiftc(["-typecheck", "-module-name", "GlassesRelayApp"] + swiftFiles(under: "Relay") + extra,
                   in: directory)
    }

    @Test("the transport, the CoreMedia adapter, the relay core built for iOS and the SwiftUI shell typecheck; calls outside the stand-ins do not")
    func appleFilesTypecheck() throws {
        #expect(Self.swiftFiles(under: "Relay").count >= 3, "\(Self.swiftFiles(under: "Relay"))")
        #expect(Self.swiftFiles(under: "Sources/GlassesLinkNetwork").count == 1)
        let (directory, _) = try Self.buildModules()
        defer { try? FileManager.default.removeItem(at: directory) }
        let shell = try Self.typecheckShell(in: directory)
        #expect(shell.status == 0, "\(shell.output)")

        // The files really took their Apple branches: each probe reaches for API the stand-ins leave out (all of it
        // real Apple API), and each is refused.
        let probe = directory.appendingPathComponent("probe.swift")
        try """
        import CoreMedia
        import Network
        import SwiftUI

        func probeNetwork(_ connection: NWConnection) { connection.restart() }
        func probeCoreMedia(_ buffer: CMSampleBuffer) -> CMTime { CMSampleBufferGetDuration(buffer) }
        struct ProbeView: View {
            var body: some View { Text("probe").bold() }
        }
        """.write(to: probe, atomically: true, encoding: .utf8)
        let rejected = try Self.typecheckShell(in: directory, extra: [probe.path])
        #expect(rejected.status != 0)
        #expect(rejected.output.contains("value of type 'NWConnection' has no member 'restart'"), "\(rejected.output)")
        #expect(rejected.output.contains("cannot find 'CMSampleBufferGetDuration' in scope"), "\(rejected.output)")
        #expect(rejected.output.contains("value of type 'Text' has no member 'bold'"), "\(rejected.output)")
    }
}
