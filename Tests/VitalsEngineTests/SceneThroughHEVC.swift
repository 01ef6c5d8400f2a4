import Foundation
import GlassesSimulator
import GlassesVideo
import VitalsEngine
import WearablesKit

/// Simulated video through a real codec for the tests: the simulator's NV12 frames encoded by libx265 and decoded by
/// libavcodec, as glasses streaming HEVC would deliver them.
enum SceneThroughHEVC {
    /// The benchmark's subject for `seed` (Benchmarks/VitalsBenchmark.swift, `runSubject`), drawn exactly as there.
    /// With `wearerMotion`, the wearer's head moves so (as the benchmark's moving conditions have it).
    static func benchmarkSubject(seed: UInt64, wearerMotion: WearerMotion? = nil) throws -> SimulatedScene {
        var random = SeededRandom(seed: seed, stream: 99)
        let pulseRate = random.uniform(45 ... 150), breathingRate = random.uniform(6 ... 30)
        let rmssd = max(5, random.uniform(15 ... 80) * min(1, pow(60 / pulseRate / 0.8, 2)))
        return try SimulatedScene(profile: SubjectProfile(
            pulseRate: pulseRate, breathingRate: breathingRate, hrvRMSSD: rmssd,
            lightingLevel: random.uniform(0.7 ... 1.3), lightingDrift: random.uniform(0 ... 0.03),
            headMotion: wearerMotion != nil, wearerMotion: wearerMotion ?? .drift, seed: seed))
    }

    /// Renders `scene` at `fps` (30 by default) for `seconds`, through HEVC at `bitrate`, and hands each decoded
    /// picture to `body` with the time (s) of the frame whose encoding released it.
    static func run(_ scene: SimulatedScene, width: Int, height: Int, seconds: Double, bitrate: Int, fps: Int = 30,
                    _ body: (DecodedVideoFrame, Double) throws -> Void) throws {
        let encoder = try HEVCEncoder(width: width, height: height, frameRate: fps, bitrate: bitrate)
        let decoder = try VideoFrameDecoder(outputFormat: .nv12VideoRange)
        var buffer = [UInt8](repeating: 0, count: width * height * 3 / 2)
        for n in 0 ..< Int(seconds * Double(fps)) {
            let t = Double(n) / Double(fps)
            let us = Int64((t * 1_000_000).rounded())
            buffer.withUnsafeMutableBytes { scene.render(at: t, width: width, height: height, into: $0) }
            guard let image = RawVideoImage(width: width, height: height, lumaBytesPerRow: width, chromaBytesPerRow: width,
                                            data: Data(buffer)) else { throw TestFailure("the simulator's frame is not NV12 of \(width)×\(height)") }
            for sample in try encoder.encode(image, presentationTimeUs: us) {
                let frame = VideoFrame(presentationTimeUs: us, content: .hevc(HEVCSample(
                    data: sample.data, isKeyframe: sample.isKeyframe, codecConfiguration: encoder.codecConfiguration)))
                for decoded in try decoder.decode(frame) { try body(decoded, t) }
            }
        }
    }

    /// Runs `engine` on a decoded NV12 picture.
    /// Runs the engine on one decoded frame; `after` is handed the same frame's view once the engine is done with it.
    static func process(_ decoded: DecodedVideoFrame, with engine: VitalsEngine,
                        after: (VitalsPixelView) -> Void = { _ in }) throws -> VitalsFrameResult {
        let pb = decoded.pixelBuffer
        return try pb.withUnsafeReadOnlyStorage { storage -> VitalsFrameResult in
            guard let base = storage.baseAddress?.assumingMemoryBound(to: UInt8.self), pb.planes.count > 1 else {
                throw TestFailure("decoded picture has no planes")
            }
            let view = try VitalsPixelView(
                format: .nv12VideoRange, width: pb.width, height: pb.height,
                plane0: UnsafePointer(base + pb.planes[0].offset), bytesPerRow0: pb.planes[0].bytesPerRow,
                plane1: UnsafePointer(base + pb.planes[1].offset), bytesPerRow1: pb.planes[1].bytesPerRow)
            let result = engine.process(view, timestampUs: decoded.presentationTimeUs)
            after(view)
            return result
        }
    }
}
