import Foundation
import WearablesKit

/// Runs a command-line tool and returns its exit status, standard output and standard error.
struct ToolRun {
    var status: Int32
    var output: Data
    var errorText: String
}

enum Tool {
    /// Runs `executable` (looked up in PATH) with `arguments`; both pipes are drained concurrently.
    static func run(_ executable: String, _ arguments: [String]) throws -> ToolRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        let outPipe = Pipe(), errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let errorBox = ErrorBox()
        let reader = Thread {
            errorBox.data = errPipe.fileHandleForReading.readDataToEndOfFile()
            errorBox.done.signal()
        }
        reader.start()
        let output = outPipe.fileHandleForReading.readDataToEndOfFile()
        errorBox.done.wait()
        process.waitUntilExit()
        return ToolRun(status: process.terminationStatus, output: output,
                       errorText: String(decoding: errorBox.data, as: UTF8.self))
    }

    /// Runs ffmpeg quietly and throws when it fails.
    @discardableResult
    static func ffmpeg(_ arguments: [String]) throws -> Data {
        let result = try run("ffmpeg", ["-hide_banner", "-nostdin", "-v", "error", "-y"] + arguments)
        guard result.status == 0 else {
            throw ToolFailure(description: "ffmpeg \(arguments.joined(separator: " ")) failed: \(result.errorText)")
        }
        return result.output
    }

    /// The per-frame MD5s of `file` decoded to yuv420p, as `ffmpeg -f framemd5` lists them.
    static func frameMD5s(_ file: String, pixelFormat: String = "yuv420p") throws -> [String] {
        let output = try ffmpeg(["-i", file, "-f", "framemd5", "-pix_fmt", pixelFormat, "-"])
        return String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            return line.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }
}

/// Holds the stderr bytes read on another thread; the semaphore orders the write before the read.
final class ErrorBox: @unchecked Sendable {
    // @unchecked Sendable: `data` is written once by the reader thread before `done` is signalled and read after.
    var data = Data()
    let done = DispatchSemaphore(value: 0)
}

struct ToolFailure: Error, CustomStringConvertible {
    var description: String
}

/// A fresh temporary directory for one test.
func makeTemporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("glassesvideo-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A deterministic NV12 test picture: gradients that move with `index`, plus a little pseudo-random texture.
func syntheticImage(width: Int, height: Int, index: Int) -> RawVideoImage {
    var data = Data(count: width * height * 3 / 2)
    data.withUnsafeMutableBytes { raw in
        let bytes = raw.bindMemory(to: UInt8.self)
        var seed: UInt32 = 12345
        for y in 0 ..< height {
            for x in 0 ..< width {
                seed = seed &* 1_103_515_245 &+ 12345
                let texture = Int((seed >> 16) & 7)
                bytes[y * width + x] = UInt8(16 + (x + y + index * 4 + texture) % 220)
            }
        }
        for y in 0 ..< height / 2 {
            for x in 0 ..< width / 2 {
                bytes[width * height + y * width + 2 * x] = UInt8(64 + (x + index) % 128)
                bytes[width * height + y * width + 2 * x + 1] = UInt8(64 + (y + 2 * index) % 128)
            }
        }
    }
    return RawVideoImage(width: width, height: height, lumaBytesPerRow: width, chromaBytesPerRow: width, data: data)!
}
