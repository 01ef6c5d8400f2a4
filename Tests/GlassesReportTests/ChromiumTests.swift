import Foundation
import Synchronization
import Testing
@testable import GlassesReport

/// Headless Chromium, when installed (Debian's `chromium`; `Scripts/test` installs it through `Scripts/setup` when the
/// report tests are part of the run).
enum Chromium {
    /// The browser's path, or nil when there is none.
    static let path: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    static let skipMessage = "chromium is not installed: the report rendering tests are skipped "
        + "(apt-get install chromium, or run Scripts/test, which installs it when the report tests run)"

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs a program to its end (output read on other threads so no pipe fills), killing it after `timeout` seconds.
    static func run(_ executable: String, _ arguments: [String], timeout: Double = 120) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = FileManager.default.temporaryDirectory.path  // chromium wants a writable profile home
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let group = DispatchGroup()
        let collected = Collected()
        for (pipe, isOut) in [(out, true), (err, false)] {
            group.enter()
            DispatchQueue.global().async {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                collected.set(data, isOut: isOut)
                group.leave()
            }
        }
        try process.run()
        let deadline = DispatchTime.now() + timeout
        if group.wait(timeout: deadline) == .timedOut {
            process.terminate()
            group.wait()
        }
        process.waitUntilExit()
        let (stdout, stderr) = collected.get()
        return Output(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// What the two reader threads collected.
    final class Collected: Sendable {
        private let state = Mutex((out: Data(), err: Data()))
        func set(_ data: Data, isOut: Bool) { state.withLock { if isOut { $0.out = data } else { $0.err = data } } }
        func get() -> (Data, Data) { state.withLock { ($0.out, $0.err) } }
    }

    /// Width and height from a PNG's IHDR chunk, or nil when the bytes are not a PNG.
    static func pngSize(_ data: Data) -> (width: Int, height: Int)? {
        let bytes = [UInt8](data.prefix(24))
        guard bytes.count == 24, bytes[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],
              bytes[12..<16] == [0x49, 0x48, 0x44, 0x52] else { return nil }
        func be32(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        return (be32(16), be32(20))
    }

    /// The screenshot's grey levels (decoded by ffmpeg), to tell a drawn page from a blank one.
    static func greyLevels(_ png: URL) throws -> [UInt8]? {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg") else { return nil }
        let raw = png.deletingPathExtension().appendingPathExtension("gray")
        let result = try run("/usr/bin/ffmpeg", ["-loglevel", "error", "-y", "-i", png.path, "-f", "rawvideo", "-pix_fmt", "gray", raw.path])
        guard result.status == 0 else { return nil }
        return [UInt8](try Data(contentsOf: raw))
    }
}

@Suite("Reports in headless Chromium")
struct ChromiumTests {
    static let width = 1280, height = 2000

    @Test("each report renders without a console error, and its screenshot is non-blank at the window's size",
          .enabled(if: Chromium.path != nil, Comment(rawValue: Chromium.skipMessage)),
          arguments: ["simulated", "replay-reference", "faults", "empty", "benchmark"])
    func renders(_ name: String) throws {
        let browser = try #require(Chromium.path)
        let html = try #require(try Pages.all().first { $0.0 == name }?.1)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("report-chromium-\(name)-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let page = directory.appendingPathComponent("\(name).html")
        try Data(html.utf8).write(to: page)
        let shot = directory.appendingPathComponent("\(name).png")
        let common = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                      "--user-data-dir=\(directory.appendingPathComponent("profile").path)"]
        let result = try Chromium.run(browser, common + [
            "--enable-logging=stderr", "--v=0", "--screenshot=\(shot.path)", "--window-size=\(Self.width),\(Self.height)", page.absoluteString,
        ])
        #expect(result.status == 0, "chromium exited \(result.status): \(result.stderr.suffix(800))")
        // A console message is an error of the page (a blocked fetch, a CSP violation, a script): there must be none.
        let console = result.stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }
        #expect(console.isEmpty, "console: \(console.joined(separator: "\n"))")
        let png = try Data(contentsOf: shot)
        let size = try #require(Chromium.pngSize(png), "the screenshot is not a PNG")
        #expect(size.width == Self.width && size.height == Self.height)
        if let grey = try Chromium.greyLevels(shot) {
            #expect(grey.count == Self.width * Self.height)
            let mean = grey.reduce(0.0) { $0 + Double($1) } / Double(max(grey.count, 1))
            let variance = grey.reduce(0.0) { $0 + (Double($1) - mean) * (Double($1) - mean) } / Double(max(grey.count, 1))
            let levels = Set(grey).count
            let inked = grey.filter { abs(Double($0) - mean) > 40 }.count
            // Text and plots: many grey levels, real variance, and ink on at least 0.3 % of the pixels.
            #expect(levels >= 32 && variance > 20 && Double(inked) / Double(grey.count) > 0.003,
                    "looks blank: \(levels) grey levels, variance \(variance), \(inked) inked pixels")
        } else {
            #expect(png.count > 20_000, "a \(png.count)-byte screenshot of \(Self.width)x\(Self.height) is blank")
        }
        // The DOM chromium built holds what the page says (the figures for a run with frames; the notice for none).
        let dom = try Chromium.run(browser, common + ["--dump-dom", page.absoluteString])
        #expect(dom.stdout.contains("<main>"))
        let figures = name == "benchmark" ? 3 : 6
        #expect(name == "empty" ? dom.stdout.contains("No frames arrived") : occurrences(of: "<svg", in: dom.stdout) >= figures)
    }
}
