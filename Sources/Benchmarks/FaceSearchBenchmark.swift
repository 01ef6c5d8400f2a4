// The engine alone on decoded clips: its CPU per frame, split by whether a face was tracked, so the cost of looking
// for a face where there is none (what glasses mostly see) is a number of its own (issue #44's budget).
import Foundation
import GlassesVideo
import VitalsEngine

/// `Benchmarks faces CLIP... [--runs N]`: decodes each clip with libavcodec into memory, then runs a fresh engine
/// over its frames N times (best by CPU), printing the engine's CPU per frame with and without a tracked face and
/// the worst single frame.
func runFaceSearchBenchmark(_ arguments: [String]) {
    var runs = 3
    var clips: [String] = []
    var cursor = arguments.makeIterator()
    while let argument = cursor.next() {
        switch argument {
        case "--runs":
            guard let v = cursor.next().flatMap(Int.init), (1 ... 20).contains(v) else { faceUsage() }
            runs = v
        case "--help", "-h": faceUsage()
        default:
            guard !argument.hasPrefix("-") else { faceUsage() }
            clips.append(argument)
        }
    }
    guard !clips.isEmpty else { faceUsage() }
    say2("engine alone on decoded frames (NV12 video range), best of \(runs) by CPU")
    for clip in clips {
        let frames: [DecodedVideoFrame]
        do {
            let reader = try VideoFileReader(path: clip)
            let decoder = try VideoFrameDecoder(outputFormat: .nv12VideoRange)
            var all: [DecodedVideoFrame] = []
            while let frame = try reader.nextFrame() { all += try decoder.decode(frame) }
            all += try decoder.flush()
            frames = all
        } catch {
            say2("faces: \(clip): \(error)")
            exit(66)
        }
        guard let first = frames.first else { say2("faces: \(clip) has no frames"); exit(66) }
        var best: FaceSearchCost?
        for _ in 0 ..< runs {
            guard let engine = try? VitalsEngine() else { say2("faces: no face cascade (Scripts/setup)"); exit(69) }
            var cost = FaceSearchCost()
            for decoded in frames {
                var ms = 0.0
                let result = processDecoded(decoded, engine: engine, cpuMs: &ms)
                cost.add(ms: ms, face: result?.face != nil)
                cost.windows += engine.lastFaceSearchWork.windows
                cost.pixels += engine.lastFaceSearchWork.pixels
            }
            if best.map({ cost.totalMs < $0.totalMs }) ?? true { best = cost }
        }
        guard let best else { continue }
        let name = URL(fileURLWithPath: clip).lastPathComponent
        say2(String(format: "%@ %dx%d, %d frames: engine %.3f ms/frame; no face %d frames at %.3f ms, face %d frames at %.3f ms; worst frame %.1f ms; search %d windows and %d pixels a frame",
                    name, first.pixelBuffer.width, first.pixelBuffer.height, frames.count, best.totalMs / Double(max(1, best.frames)),
                    best.noFaceFrames, best.noFaceMs / Double(max(1, best.noFaceFrames)),
                    best.frames - best.noFaceFrames, (best.totalMs - best.noFaceMs) / Double(max(1, best.frames - best.noFaceFrames)),
                    best.worstMs, best.windows / max(1, best.frames), best.pixels / max(1, best.frames)))
    }
}

private struct FaceSearchCost {
    var frames = 0, noFaceFrames = 0
    var totalMs = 0.0, noFaceMs = 0.0, worstMs = 0.0
    var windows = 0, pixels = 0

    mutating func add(ms: Double, face: Bool) {
        frames += 1
        totalMs += ms
        worstMs = max(worstMs, ms)
        if !face { noFaceFrames += 1; noFaceMs += ms }
    }
}

private func faceUsage() -> Never {
    FileHandle.standardError.write(Data("usage: Benchmarks faces CLIP... [--runs N=3]\n".utf8))
    exit(64)
}
