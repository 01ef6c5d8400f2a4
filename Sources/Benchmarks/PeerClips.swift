// Writes the photo benchmark's clips to disk exactly as the engine saw them, with their truth and our run values,
// so the peers (Scripts/peers/rppg_peers.py) can be run on the same pixels: `Benchmarks vitals --clips-dir DIR`.
import Foundation
import GlassesMedia
import GlassesVideo

/// An error writing a clip for the peers, with a message saying which file and why.
struct PeerClipError: Error, CustomStringConvertible {
    /// What went wrong, naming the file.
    var description: String
}

/// Writes one clip: raw frames losslessly to FFV1 in Matroska through the ffmpeg CLI (every frame a keyframe, as
/// FFV1 frames are intra-coded anyway: a peer checking for inter frames must not take the clip for a lossy one), HEVC samples as they were
/// encoded to MP4 (``HEVCFileWriter``, no re-encoding), so a peer decoding the file sees the engine's pixels.
final class PeerClipWriter {
    /// The file being written.
    let path: String
    /// The ffmpeg process encoding raw frames (nil for HEVC clips).
    private var ffmpeg: Process?
    /// The ffmpeg process's standard input (raw NV12 frames).
    private var ffmpegInput: FileHandle?
    /// The MP4 writer of an HEVC clip (nil for raw clips).
    private var hevcWriter: HEVCFileWriter?

    /// Starts a lossless FFV1 file of NV12 video-range frames of the given size at `fps`.
    /// - Throws: ``PeerClipError`` when ffmpeg cannot be started.
    init(rawPath: String, width: Int, height: Int, fps: Int) throws {
        path = rawPath
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
                             "-f", "rawvideo", "-pix_fmt", "nv12", "-s", "\(width)x\(height)", "-framerate", "\(fps)",
                             "-color_range", "tv", "-i", "pipe:0",
                             "-c:v", "ffv1", "-level", "3", "-g", "1", "-pix_fmt", "yuv420p", "-threads", "1", rawPath]
        let pipe = Pipe()
        process.standardInput = pipe
        process.standardOutput = FileHandle.nullDevice
        do { try process.run() } catch {
            throw PeerClipError(description: "cannot start ffmpeg to write \(rawPath): \(error) (is ffmpeg on PATH?)")
        }
        ffmpeg = process
        ffmpegInput = pipe.fileHandleForWriting
    }

    /// Starts an MP4 file of the HEVC samples of an encoder with this configuration.
    /// - Throws: ``PeerClipError`` when the file cannot be created.
    init(hevcPath: String, codecConfiguration: HEVCCodecConfiguration) throws {
        path = hevcPath
        do { hevcWriter = try HEVCFileWriter(path: hevcPath, codecConfiguration: codecConfiguration, container: .mp4) } catch {
            throw PeerClipError(description: "cannot create \(hevcPath): \(error)")
        }
    }

    /// Appends one raw NV12 frame (luma then interleaved chroma, no row padding).
    /// - Throws: ``PeerClipError`` when ffmpeg has gone (its own message is on standard error).
    func writeRaw(_ frame: [UInt8]) throws {
        guard let ffmpegInput else { throw PeerClipError(description: "\(path) is not a raw clip") }
        do { try ffmpegInput.write(contentsOf: Data(frame)) } catch {
            throw PeerClipError(description: "ffmpeg stopped taking frames for \(path): \(error)")
        }
    }

    /// Appends one encoded HEVC sample.
    /// - Throws: ``PeerClipError`` when the sample cannot be written.
    func writeHEVC(_ sample: EncodedHEVCSample, codecConfiguration: HEVCCodecConfiguration) throws {
        guard let hevcWriter else { throw PeerClipError(description: "\(path) is not an HEVC clip") }
        do { try hevcWriter.write(sample, codecConfiguration: codecConfiguration) } catch {
            throw PeerClipError(description: "cannot write a sample to \(path): \(error)")
        }
    }

    /// Completes the file: closes ffmpeg's input and waits for it, or finishes the MP4.
    /// - Throws: ``PeerClipError`` when ffmpeg fails or the file cannot be completed.
    func finish() throws {
        if let hevcWriter {
            self.hevcWriter = nil
            do { try hevcWriter.finish() } catch { throw PeerClipError(description: "cannot complete \(path): \(error)") }
        }
        if let ffmpeg, let ffmpegInput {
            self.ffmpeg = nil
            self.ffmpegInput = nil
            try? ffmpegInput.close()
            ffmpeg.waitUntilExit()
            guard ffmpeg.terminationReason == .exit, ffmpeg.terminationStatus == 0 else {
                throw PeerClipError(description: "ffmpeg failed writing \(path) (status \(ffmpeg.terminationStatus))")
            }
        }
    }

    deinit {
        // A clip abandoned on an error: stop ffmpeg rather than leave it waiting for frames.
        if let ffmpeg {
            try? ffmpegInput?.close()
            ffmpeg.waitUntilExit()
        }
    }
}

/// One clip in the manifest the peer script reads (`clips.json`): where the file is, its truth and our run values.
struct PeerClipRecord: Codable, Sendable {
    /// The photo condition (`photo-raw`, `photo-hvc1-2M`, …).
    var condition: String
    /// The clip file, relative to the manifest's folder.
    var file: String
    /// The portrait's name.
    var portrait: String
    /// The face width rendered, px at 504×896.
    var faceWidth: Int
    /// The clip's length, s.
    var duration: Double
    /// Frames per second.
    var fps: Int
    /// The true mean pulse over the clip, bpm.
    var truePulse: Double
    /// The true mean breathing rate over the clip, per minute.
    var trueBreathing: Double
    /// Our run pulse (median of the stable samples), bpm; nil when the engine gave none.
    var ourPulse: Double?
    /// Our run breathing rate, per minute; nil when the engine gave none.
    var ourBreathing: Double?
    /// The true RMSSD over the clip's last 60 s (ms); nil for shorter clips and conditions that do not score HRV.
    var trueRMSSD: Double?
    /// Why the clip failed (engine, encoder or file), if it did.
    var failure: String?
}

/// Writes the manifest `clips.json` in `directory`, replacing an earlier one.
/// - Throws: ``PeerClipError`` when it cannot be encoded or written.
func writePeerManifest(_ records: [PeerClipRecord], to directory: URL) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    let url = directory.appendingPathComponent("clips.json")
    do { try encoder.encode(records).write(to: url, options: .atomic) } catch {
        throw PeerClipError(description: "cannot write \(url.path): \(error)")
    }
}

/// Creates the folder `path` given with `flag` (and its parents), or fails with a clear message if it is a file;
/// `holding` ends that message (" for the pages").
/// - Throws: ``PeerClipError``.
func prepareOutputFolder(_ path: String, flag: String, holding: String = "") throws -> URL {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
        guard isDirectory.boolValue else { throw PeerClipError(description: "\(flag) \(path) is a file: give a folder\(holding)") }
    } else {
        do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) } catch {
            throw PeerClipError(description: "\(flag) \(path): cannot create the folder (\(error.localizedDescription))")
        }
    }
    return URL(fileURLWithPath: path, isDirectory: true)
}

/// Creates `path` (and its parents) for the clips, or fails with a clear message if it is a file.
/// - Throws: ``PeerClipError``.
func preparePeerClipDirectory(_ path: String) throws -> URL {
    let url = try prepareOutputFolder(path, flag: "--clips-dir")
    // A dead ffmpeg must turn writes into errors, not kill the benchmark with SIGPIPE.
    signal(SIGPIPE, SIG_IGN)
    return url
}
