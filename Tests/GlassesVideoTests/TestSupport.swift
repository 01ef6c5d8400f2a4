import Foundation
import WearablesKit
import SmartSpectraInput
@testable import GlassesVideo

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

/// A deterministic NV12 test picture: diagonal gradients with a pseudo-random texture that move with `index`.
/// Built from precomputed lines copied row by row, so it stays fast in debug builds.
func syntheticImage(width: Int, height: Int, index: Int) -> RawVideoImage {
    var seed: UInt32 = 12345
    let span = width + height + 4 * index + 8
    let lumaLine = (0 ..< span).map { position -> UInt8 in
        seed = seed &* 1_103_515_245 &+ 12345
        return UInt8(16 + (position + Int((seed >> 16) & 7)) % 220)
    }
    let chromaLine = (0 ..< width + height + 2 * index + 8).map { UInt8(64 + $0 % 128) }
    var data = Data(count: width * height * 3 / 2)
    data.withUnsafeMutableBytes { raw in
        let base = raw.baseAddress!
        lumaLine.withUnsafeBytes { line in
            for y in 0 ..< height {
                (base + y * width).copyMemory(from: line.baseAddress! + y + 4 * index, byteCount: width)
            }
        }
        chromaLine.withUnsafeBytes { line in
            for y in 0 ..< height / 2 {
                (base + width * height + y * width).copyMemory(from: line.baseAddress! + 2 * y + index, byteCount: width)
            }
        }
    }
    return RawVideoImage(width: width, height: height, lumaBytesPerRow: width, chromaBytesPerRow: width, data: data)!
}

/// Decodes every frame of a file with our reader and decoder (plus the final flush).
func decodeFile(_ path: String, format: PixelFormat = .nv12VideoRange, rowAlignment: Int = 64) throws -> (frames: [DecodedVideoFrame], decoder: VideoFrameDecoder) {
    let reader = try VideoFileReader(path: path)
    let decoder = try VideoFrameDecoder(outputFormat: format, options: VideoDecoderOptions(rowAlignment: rowAlignment))
    var frames: [DecodedVideoFrame] = []
    while let frame = try reader.nextFrame() {
        frames += try decoder.decode(frame)
    }
    frames += try decoder.flush()
    return (frames, decoder)
}

/// Our pictures' per-frame MD5s, computed by ffmpeg over the raw bytes (`-f framemd5` of a rawvideo input).
func ourFrameMD5s(_ buffers: [PixelBuffer], directory: URL) throws -> [String] {
    guard let first = buffers.first else { return [] }
    var bytes = Data()
    let pixelFormat: String
    if first.format.isNV12 {
        pixelFormat = "yuv420p"
        for buffer in buffers { bytes.append(ChromaRepacking.i420Data(from: buffer)!) }
    } else {
        pixelFormat = "bgra"
        for buffer in buffers { bytes.append(tightBGRA(buffer)) }
    }
    let file = directory.appendingPathComponent("ours-\(UUID().uuidString).raw")
    try bytes.write(to: file)
    return try Tool.frameMD5s(pixelFormat: pixelFormat, rawInput: file.path, width: first.width, height: first.height)
}

/// The BGRA pixels of a buffer without row padding.
func tightBGRA(_ buffer: PixelBuffer) -> Data {
    var out = Data(capacity: buffer.width * buffer.height * 4)
    buffer.withUnsafeBytes(ofPlane: 0) { plane in
        for row in 0 ..< buffer.height {
            let start = row * buffer.planes[0].bytesPerRow
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: plane[start ..< start + buffer.width * 4]))
        }
    }
    return out
}

extension Tool {
    /// Per-frame MD5s of a rawvideo file as ffmpeg computes them.
    static func frameMD5s(pixelFormat: String, rawInput: String, width: Int, height: Int) throws -> [String] {
        let output = try ffmpeg(["-f", "rawvideo", "-pix_fmt", pixelFormat, "-s", "\(width)x\(height)", "-i", rawInput,
                                 "-f", "framemd5", "-"])
        return String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            return line.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    /// Makes an HEVC clip with the ffmpeg CLI and libx265.
    static func makeClip(_ path: String, width: Int, height: Int, frames: Int, noise: Bool, x265Parameters: String = "keyint=5", preset: String = "ultrafast") throws {
        var source = "testsrc2=size=\(width)x\(height):rate=30"
        if noise { source += ",noise=alls=30:allf=t+u" }
        try ffmpeg(["-f", "lavfi", "-i", source, "-frames:v", "\(frames)", "-pix_fmt", "yuv420p", "-c:v", "libx265",
                    "-preset", preset, "-x265-params", "log-level=error:" + x265Parameters, path])
    }
}
