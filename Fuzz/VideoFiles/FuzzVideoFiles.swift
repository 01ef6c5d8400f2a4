// libFuzzer target: VideoFileReader on arbitrary bytes (Y4M, MP4/MOV, Matroska, raw HEVC and H.264).
// Built by Fuzz/VideoFiles/build.sh with `swiftc -sanitize=fuzzer,address`; see README.md.
import Foundation
import GlassesVideo
import GlassesMedia

/// One file per process: libFuzzer runs inputs one after another on one thread.
nonisolated(unsafe) private var inputPath: String = {
    let directory = ProcessInfo.processInfo.environment["FUZZ_TMPDIR"] ?? NSTemporaryDirectory()
    return (directory as NSString).appendingPathComponent("glasses-fuzz-video-\(getpid()).bin")
}()

/// The most frames read from one input: enough to reach timestamp, truncation and parameter-set-change paths,
/// bounded so that a valid long file cannot stall the fuzzer.
private let maximumFrames = 64

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVideoFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Data(bytes: data, count: size)
    guard FileManager.default.createFile(atPath: inputPath, contents: bytes) else { return 0 }
    defer { unlink(inputPath) }
    do {
        let reader = try VideoFileReader(path: inputPath)
        var frames = 0
        var lastTime: Int64?
        while frames < maximumFrames, let frame = try reader.nextFrame() {
            frames += 1
            // The reader's promises: times within the limits, steps within the documented gap, sizes in range.
            precondition(abs(frame.presentationTimeUs) <= VideoFileLimits.maximumTimestampUs)
            if let lastTime, frame.presentationTimeUs > lastTime {
                precondition(frame.presentationTimeUs - lastTime <= VideoFileLimits.maximumFrameGapUs)
            }
            lastTime = max(lastTime ?? frame.presentationTimeUs, frame.presentationTimeUs)
            if case .raw(let image) = frame.content {
                precondition(image.width <= VideoFileLimits.maximumDimension && image.height <= VideoFileLimits.maximumDimension)
            }
        }
    } catch {
        // Every failure must be a typed error with a message in words, never an FFmpeg error number.
        precondition(!error.message.isEmpty)
        precondition(!error.description.contains("Error number"))
    }
    return 0
}
