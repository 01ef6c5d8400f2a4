import Foundation
import Synchronization

// liblsl is found at run time, never linked: the bridge builds and runs without it, and only `--lsl` and
// `check --reference lsl:…` load it. The few C functions used are declared here with their C signatures (lsl_c.h,
// liblsl 1.13 and later) and resolved with dlsym; no header is vendored.

/// Why liblsl could not be used.
package struct LSLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    package enum Code: Sendable, Hashable {
        /// No candidate library could be loaded: liblsl is not installed where the bridge looks.
        case libraryNotFound
        /// A library loaded but lacks a function the bridge needs (not liblsl, or far too old).
        case missingFunction
        /// liblsl refused a call (a stream it could not create, an inlet it could not open).
        case callFailed
        /// No stream matched within the wait.
        case streamNotFound
        /// A stream stopped answering.
        case streamLost
    }

    /// The kind of failure.
    package let code: Code
    /// One line a person can act on.
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }

    /// The one-line hint given when liblsl is missing.
    package static let installHint =
        "install it with `pip install pylsl` (its wheel carries liblsl), or set GLASSES_LSL_LIBRARY to liblsl.so or its folder"
}

/// Where liblsl is looked for, in order (a plain value: the file system is passed in, so it is testable without it).
///
/// 1. `GLASSES_LSL_LIBRARY`: a file, or a folder holding `liblsl.so*`. When it is set, only it is tried.
/// 2. `PYLSL_LIB`: pylsl's own variable, a file.
/// 3. An installed pylsl (`pylsl/lib/liblsl.so*`): under `$VIRTUAL_ENV`, `~/.local/lib/python3*/site-packages`,
///    `/usr/local/lib/python3*/dist-packages` and `site-packages`, `/usr/lib/python3/dist-packages`.
/// 4. The system linker: `liblsl.so.2`, then `liblsl.so`.
package struct LSLLibraryLocator: Sendable {
    /// One place to try.
    package struct Candidate: Sendable, Hashable {
        /// A path, or a bare file name for the system linker.
        package var path: String
        /// Where it came from, for messages (`GLASSES_LSL_LIBRARY`, `pylsl`, `system`).
        package var origin: String
    }

    /// The file names liblsl goes by, most specific first.
    package static let fileNames = ["liblsl.so.2", "liblsl.so"]

    private let environment: [String: String]
    private let home: String
    private let list: @Sendable (String) -> [String]
    private let isFile: @Sendable (String) -> Bool

    /// A locator over the real file system and `environment`.
    package init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.init(
            environment: environment, home: environment["HOME"] ?? NSHomeDirectory(),
            list: { (try? FileManager.default.contentsOfDirectory(atPath: $0)) ?? [] },
            isFile: { path in
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
            }
        )
    }

    /// A locator over a given file system: `list` names a folder's entries, `isFile` says whether a path is a file.
    package init(
        environment: [String: String], home: String, list: @escaping @Sendable (String) -> [String],
        isFile: @escaping @Sendable (String) -> Bool
    ) {
        self.environment = environment
        self.home = home
        self.list = list
        self.isFile = isFile
    }

    /// The value of `GLASSES_LSL_LIBRARY`, when set and not empty.
    package var override: String? { environment["GLASSES_LSL_LIBRARY"].flatMap { $0.isEmpty ? nil : $0 } }

    /// Every place to try, in order.
    package func candidates() -> [Candidate] {
        if let override {
            if isFile(override) { return [Candidate(path: override, origin: "GLASSES_LSL_LIBRARY")] }
            return libraries(in: override).map { Candidate(path: $0, origin: "GLASSES_LSL_LIBRARY") }
        }
        var found: [Candidate] = []
        if let pylsl = environment["PYLSL_LIB"], !pylsl.isEmpty, isFile(pylsl) {
            found.append(Candidate(path: pylsl, origin: "PYLSL_LIB"))
        }
        for sitePackages in sitePackageFolders() {
            found += libraries(in: sitePackages + "/pylsl/lib").map { Candidate(path: $0, origin: "pylsl") }
        }
        found += Self.fileNames.map { Candidate(path: $0, origin: "system") }
        var seen = Set<String>()
        return found.filter { seen.insert($0.path).inserted }
    }

    /// The folders an installed pylsl may sit in.
    private func sitePackageFolders() -> [String] {
        var roots: [(lib: String, leaves: [String])] = []
        if let venv = environment["VIRTUAL_ENV"], !venv.isEmpty { roots.append((venv + "/lib", ["site-packages"])) }
        roots.append((home + "/.local/lib", ["site-packages"]))
        roots.append(("/usr/local/lib", ["dist-packages", "site-packages"]))
        var folders: [String] = []
        for root in roots {
            let pythons = list(root.lib).filter { $0.hasPrefix("python3") }.sorted(by: >)
            for python in pythons {
                folders += root.leaves.map { "\(root.lib)/\(python)/\($0)" }
            }
        }
        folders.append("/usr/lib/python3/dist-packages")
        return folders
    }

    /// The liblsl files in `folder`: the known names first, then any other `liblsl.so.*` (newest name last).
    private func libraries(in folder: String) -> [String] {
        let entries = list(folder)
        let known = Self.fileNames.filter(entries.contains)
        let others = entries.filter { $0.hasPrefix("liblsl.so.") && !known.contains($0) }.sorted()
        return (known + others).map { "\(folder)/\($0)" }.filter(isFile)
    }
}

/// liblsl, loaded: the C functions the bridge calls, resolved once per process.
///
/// The library is never unloaded (liblsl keeps threads of its own running), so one load serves the whole process.
package final class LSLLibrary: Sendable {
    typealias CreateStreamInfo = @convention(c) (
        UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32, Double, Int32, UnsafePointer<CChar>?
    ) -> OpaquePointer?
    typealias DestroyHandle = @convention(c) (OpaquePointer?) -> Void
    typealias GetDescription = @convention(c) (OpaquePointer?) -> OpaquePointer?
    typealias AppendChild = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> OpaquePointer?
    typealias AppendChildValue = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> OpaquePointer?
    typealias CreateOutlet = @convention(c) (OpaquePointer?, Int32, Int32) -> OpaquePointer?
    typealias PushDoubles = @convention(c) (OpaquePointer?, UnsafePointer<Double>?, Double, Int32) -> Int32
    typealias PushStrings = @convention(c) (
        OpaquePointer?, UnsafeMutablePointer<UnsafePointer<CChar>?>?, Double, Int32
    ) -> Int32
    typealias LocalClock = @convention(c) () -> Double
    typealias ResolveByProperty = @convention(c) (
        UnsafeMutablePointer<OpaquePointer?>?, UInt32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32, Double
    ) -> Int32
    typealias CreateInlet = @convention(c) (OpaquePointer?, Int32, Int32, Int32) -> OpaquePointer?
    typealias PullDoubles = @convention(c) (
        OpaquePointer?, UnsafeMutablePointer<Double>?, Int32, Double, UnsafeMutablePointer<Int32>?
    ) -> Double
    typealias TimeCorrection = @convention(c) (OpaquePointer?, Double, UnsafeMutablePointer<Int32>?) -> Double
    typealias ChannelCount = @convention(c) (OpaquePointer?) -> Int32
    typealias LibraryVersion = @convention(c) () -> Int32
    typealias SetConfigContent = @convention(c) (UnsafePointer<CChar>?) -> Void

    let createStreamInfo: CreateStreamInfo
    let destroyStreamInfo: DestroyHandle
    let getDescription: GetDescription
    let appendChild: AppendChild
    let appendChildValue: AppendChildValue
    let createOutlet: CreateOutlet
    let destroyOutlet: DestroyHandle
    let pushDoubles: PushDoubles
    let pushStrings: PushStrings
    let localClockFunction: LocalClock
    let resolveByProperty: ResolveByProperty
    let createInlet: CreateInlet
    let destroyInlet: DestroyHandle
    let pullDoubles: PullDoubles
    let timeCorrection: TimeCorrection
    let channelCount: ChannelCount

    /// The file it was loaded from (or the name the system linker resolved).
    package let path: String
    /// liblsl's version, as `lsl_library_version` gives it (118 is 1.18).
    package let version: Int

    private static let loaded = Mutex<LSLLibrary?>(nil)

    /// The process's liblsl: loaded from the first candidate of ``LSLLibraryLocator`` that is liblsl, then kept (a
    /// later call gets the same library whatever its locator says; until one loads, each call searches again).
    /// - Throws: ``LSLError`` (``LSLError/Code/libraryNotFound``) naming where it looked, with the install hint.
    package static func shared(
        locator: LSLLibraryLocator = LSLLibraryLocator()
    ) throws(LSLError) -> LSLLibrary {
        if let library = loaded.withLock({ $0 }) { return library }
        let library = try load(locator: locator)
        return loaded.withLock { kept in
            if let earlier = kept { return earlier }
            kept = library
            return library
        }
    }

    /// Loads liblsl from the first candidate that works (not cached).
    package static func load(locator: LSLLibraryLocator) throws(LSLError) -> LSLLibrary {
        var problems: [String] = []
        for candidate in locator.candidates() {
            guard let handle = dlopen(candidate.path, RTLD_NOW | RTLD_LOCAL) else {
                if candidate.origin != "system" { problems.append(dlerror().map { String(cString: $0) } ?? candidate.path) }
                continue
            }
            do {
                return try LSLLibrary(handle: handle, path: candidate.path)
            } catch {
                problems.append(error.message)
            }
        }
        var place = locator.override.map { "in GLASSES_LSL_LIBRARY=\($0)" } ?? "in PYLSL_LIB, pylsl installs or the system linker"
        if let first = problems.first { place += " (\(first))" }
        throw LSLError(.libraryNotFound, "liblsl (Lab Streaming Layer) was not found \(place): \(LSLError.installHint).")
    }

    private init(handle: UnsafeMutableRawPointer, path: String) throws(LSLError) {
        func symbol<T>(_ name: String, as type: T.Type) throws(LSLError) -> T {
            guard let pointer = dlsym(handle, name) else {
                throw LSLError(.missingFunction, "\(path) has no \(name): it is not liblsl 1.13 or later")
            }
            return unsafeBitCast(pointer, to: type)
        }
        createStreamInfo = try symbol("lsl_create_streaminfo", as: CreateStreamInfo.self)
        destroyStreamInfo = try symbol("lsl_destroy_streaminfo", as: DestroyHandle.self)
        getDescription = try symbol("lsl_get_desc", as: GetDescription.self)
        appendChild = try symbol("lsl_append_child", as: AppendChild.self)
        appendChildValue = try symbol("lsl_append_child_value", as: AppendChildValue.self)
        createOutlet = try symbol("lsl_create_outlet", as: CreateOutlet.self)
        destroyOutlet = try symbol("lsl_destroy_outlet", as: DestroyHandle.self)
        pushDoubles = try symbol("lsl_push_sample_dtp", as: PushDoubles.self)
        pushStrings = try symbol("lsl_push_sample_strtp", as: PushStrings.self)
        localClockFunction = try symbol("lsl_local_clock", as: LocalClock.self)
        resolveByProperty = try symbol("lsl_resolve_byprop", as: ResolveByProperty.self)
        createInlet = try symbol("lsl_create_inlet", as: CreateInlet.self)
        destroyInlet = try symbol("lsl_destroy_inlet", as: DestroyHandle.self)
        pullDoubles = try symbol("lsl_pull_sample_d", as: PullDoubles.self)
        timeCorrection = try symbol("lsl_time_correction", as: TimeCorrection.self)
        channelCount = try symbol("lsl_get_channel_count", as: ChannelCount.self)
        // liblsl logs at INFO on standard error by default; the bridge's standard error is its own, so liblsl keeps
        // to errors unless a configuration file is named (LSLAPICFG). Only takes effect before liblsl's first use.
        if ProcessInfo.processInfo.environment["LSLAPICFG"] == nil, let setConfig = dlsym(handle, "lsl_set_config_content") {
            unsafeBitCast(setConfig, to: SetConfigContent.self)("[log]\nlevel = -2\n")
        }
        version = Int(try symbol("lsl_library_version", as: LibraryVersion.self)())
        self.path = path
    }

    /// Seconds on liblsl's clock (`lsl_local_clock`: the steady clock, CLOCK_MONOTONIC on Linux).
    package func localClock() -> Double { localClockFunction() }
}
