// The decode benchmark (run by Scripts/bench): our file reader + HEVC decoder + conversion, single-threaded, against
// the ffmpeg CLI decoding and converting the same clips in the same run.
import Foundation
import GlassesVideo
import SmartSpectraInput

/// `Benchmarks decode [--runs N] CLIP...`: prints frames per second for ours (NV12, BGRA) and for
/// `ffmpeg -threads 1 -i CLIP -pix_fmt nv12|bgra -f null -`, the ratios, and peak memory.
func runDecodeBenchmark(_ arguments: [String]) {
    var runs = 3
    var clips: [String] = []
    var index = 0
    while index < arguments.count {
        if arguments[index] == "--runs", index + 1 < arguments.count {
            runs = max(1, Int(arguments[index + 1]) ?? 3)
            index += 2
        } else {
            clips.append(arguments[index])
            index += 1
        }
    }
    guard !clips.isEmpty else {
        FileHandle.standardError.write(Data("usage: Benchmarks decode [--runs N] CLIP...\n".utf8))
        exit(64)
    }
    print("decode benchmark: best of \(runs) runs per cell, single-threaded; ours = read file + decode + convert in-process;")
    print("cli = `ffmpeg -threads 1 -i CLIP -pix_fmt FMT -f null -` (includes process start-up).")
    print("fps shown as cpu/wall: frames per CPU second (user+sys; robust when the machine is busy) and per wall second;")
    print("ratios = ours/cli by CPU time.")
    print("")
    print(pad("clip", 26) + pad("frames", 7) + pad("ours nv12", 10) + pad("cli nv12", 10) + pad("ratio", 6)
          + pad("ours bgra", 10) + pad("cli bgra", 10) + pad("ratio", 6) + "ours nv12 / cli bgra")
    var failed = false
    for clip in clips {
        do {
            let nv12 = try bestOf(runs) { try decodeWithOurs(clip, format: .nv12VideoRange) }
            let cliNV12 = try bestOf(runs) { try decodeWithCLI(clip, pixelFormat: "nv12", frames: nv12.frames) }
            let bgra = try bestOf(runs) { try decodeWithOurs(clip, format: .bgra32) }
            let cliBGRA = try bestOf(runs) { try decodeWithCLI(clip, pixelFormat: "bgra", frames: bgra.frames) }
            let name = URL(fileURLWithPath: clip).lastPathComponent
            print(pad(name, 26) + pad("\(nv12.frames)", 7)
                  + pad(fps(nv12), 10) + pad(fps(cliNV12), 10) + pad(ratio(nv12, cliNV12), 6)
                  + pad(fps(bgra), 10) + pad(fps(cliBGRA), 10) + pad(ratio(bgra, cliBGRA), 6) + ratio(nv12, cliBGRA))
        } catch {
            failed = true
            print("\(clip): \(error)")
        }
    }
    var usage = rusage()
    getrusage(__rusage_who_t(selfWho), &usage)
    var children = rusage()
    getrusage(__rusage_who_t(childrenWho), &children)
    print("")
    print("peak memory (maxrss): ours \(usage.ru_maxrss / 1024) MiB (whole benchmark process); "
          + "ffmpeg CLI \(children.ru_maxrss / 1024) MiB (largest child)")
    if failed { exit(1) }
}

private struct Timing {
    var frames: Int
    /// CPU seconds (user + system) spent on the work: robust on a loaded machine, and what the ratios use.
    var seconds: Double
    /// Wall-clock seconds.
    var wallSeconds: Double
}

private func cpuSeconds(_ who: Int32) -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(who), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

private let selfWho = Int32(truncatingIfNeeded: RUSAGE_SELF.rawValue)
private let childrenWho = Int32(truncatingIfNeeded: RUSAGE_CHILDREN.rawValue)

private func bestOf(_ runs: Int, _ body: () throws -> Timing) throws -> Timing {
    var best: Timing?
    for _ in 0 ..< runs {
        let timing = try body()
        if best == nil || timing.seconds < best!.seconds { best = timing }
    }
    return best!
}

private func now() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

private func decodeWithOurs(_ clip: String, format: PixelFormat) throws -> Timing {
    let start = now()
    let cpuStart = cpuSeconds(selfWho)
    let reader = try VideoFileReader(path: clip)
    let decoder = try VideoFrameDecoder(outputFormat: format, options: VideoDecoderOptions(threadCount: 1))
    var frames = 0
    var checksum = 0
    while let frame = try reader.nextFrame() {
        for picture in try decoder.decode(frame) {
            frames += 1
            checksum &+= picture.pixelBuffer.withUnsafeBytes(ofPlane: 0) { Int($0[$0.count / 2]) }
        }
    }
    frames += try decoder.flush().count
    let seconds = now() - start
    let cpu = cpuSeconds(selfWho) - cpuStart
    if checksum == -1 { print("") }  // keeps the reads alive
    return Timing(frames: frames, seconds: cpu, wallSeconds: seconds)
}

private func decodeWithCLI(_ clip: String, pixelFormat: String, frames: Int) throws -> Timing {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-threads", "1", "-i", clip,
                         "-pix_fmt", pixelFormat, "-f", "null", "-"]
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    let start = now()
    let cpuStart = cpuSeconds(childrenWho)
    try process.run()
    process.waitUntilExit()
    let seconds = now() - start
    let cpu = cpuSeconds(childrenWho) - cpuStart
    guard process.terminationStatus == 0 else {
        throw BenchmarkFailure(description: "ffmpeg failed on \(clip) (status \(process.terminationStatus))")
    }
    return Timing(frames: frames, seconds: cpu, wallSeconds: seconds)
}

private struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
}

private func fps(_ timing: Timing) -> String {
    String(format: "%.0f/%.0f", Double(timing.frames) / timing.seconds, Double(timing.frames) / timing.wallSeconds)
}

private func ratio(_ ours: Timing, _ theirs: Timing) -> String { String(format: "%.2f", theirs.seconds / ours.seconds) }

private func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
}
