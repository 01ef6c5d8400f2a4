// Runs the engine again on the HEVC clips a `vitals --clips-dir DIR` run wrote, from the files alone: a change to
// the engine is tried on the same pixels in seconds (decoding only) instead of minutes of rendering and encoding.
import Foundation
import GlassesVideo
import VitalsEngine

/// `Benchmarks vitals-replay DIR [--jobs J] [--conditions NAME,...] [--verbose] [--trace]`: reads `DIR/clips.json`,
/// decodes each HEVC clip with libavcodec and prints the photo table for it as `vitals` does. The truth is the
/// manifest's clip means (pulse and breathing over the whole clip, RMSSD over its last 60 s), so per-sample errors
/// are against the clip's mean rate; raw (FFV1) clips are skipped with a note: rendering them again is as quick.
func runPhotoReplay(_ arguments: [String]) {
    var cursor = arguments.makeIterator()
    var directory: String?, jobs = 2, verbose = false, trace = false, only: Set<String>?
    func usage() -> Never {
        FileHandle.standardError.write(Data("usage: Benchmarks vitals-replay DIR [--jobs J=2] [--conditions NAME,...] [--verbose] [--trace]\n  DIR: a folder written by `Benchmarks vitals --clips-dir DIR --conditions photo-hvc1-…`\n".utf8))
        exit(64)
    }
    func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("vitals-replay: \(message)\n".utf8))
        exit(66)
    }
    while let argument = cursor.next() {
        switch argument {
        case "--jobs":
            guard let v = cursor.next().flatMap(Int.init), (1 ... 64).contains(v) else { usage() }
            jobs = v
        case "--conditions":
            guard let v = cursor.next() else { usage() }
            only = Set(v.split(separator: ",").map(String.init))
        case "--verbose": verbose = true
        case "--trace": trace = true; verbose = true
        case "--help", "-h": usage()
        default:
            guard directory == nil, !argument.hasPrefix("-") else { usage() }
            directory = argument
        }
    }
    guard let directory else { usage() }
    let folder = URL(fileURLWithPath: directory, isDirectory: true)
    let manifest = folder.appendingPathComponent("clips.json")
    let records: [PeerClipRecord]
    do { records = try JSONDecoder().decode([PeerClipRecord].self, from: Data(contentsOf: manifest)) } catch {
        fail("cannot read \(manifest.path): \(error.localizedDescription)")
    }
    let chosen = records.filter { only?.contains($0.condition) ?? true }
    let raw = chosen.filter { !$0.file.hasSuffix(".mp4") }
    if !raw.isEmpty { say2("skipping \(raw.count) raw clip(s): run `vitals --conditions photo-raw…` again instead") }
    let clips = chosen.filter { $0.file.hasSuffix(".mp4") }
    guard !clips.isEmpty else { fail("\(manifest.path) lists no HEVC clip\(only == nil ? "" : " of those conditions")") }
    let flags = (verbose: verbose, trace: trace)
    say2("replaying \(clips.count) HEVC clips from \(folder.path)")
    say2(photoTableHeader)
    for condition in Array(Set(clips.map(\.condition))).sorted() {
        let group = clips.filter { $0.condition == condition }
        let all = inParallel(group.count, jobs: jobs) { index -> PhotoResult in
            let r = replayClip(group[index], in: folder, trace: flags.trace)
            if flags.verbose { say2("  \(condition) \(describe(r))") }
            return r
        }
        reportPhotoWidths(PhotoCondition(name: condition, bitrate: nil), all)
    }
}

/// Decodes one clip into a fresh engine and scores it against the manifest's truth.
private func replayClip(_ record: PeerClipRecord, in folder: URL, trace: Bool) -> PhotoResult {
    let portrait = PortraitFixture.all.first { $0.name == record.portrait } ?? PortraitFixture.all[0]
    var result = PhotoResult(clip: PhotoClip(portrait: portrait, faceWidth: record.faceWidth, pulseRate: record.truePulse,
                                             breathingRate: record.trueBreathing, seed: 0))
    result.truePulse = record.truePulse
    result.trueBreathing = record.trueBreathing
    var scorer = PhotoScorer(result: result, trace: trace, pulseTruth: { _ in record.truePulse },
                             breathingTruth: { _ in record.trueBreathing })
    let engine: VitalsEngine
    do {
        engine = try VitalsEngine()
        let reader = try VideoFileReader(path: folder.appendingPathComponent(record.file).path)
        let decoder = try VideoFrameDecoder(outputFormat: .nv12VideoRange)
        while let frame = try reader.nextFrame() {
            for decoded in try decoder.decode(frame) {
                if let r = processDecoded(decoded, engine: engine, cpuMs: &scorer.result.engineMs) { scorer.consume(r) }
            }
        }
    } catch {
        scorer.result.failure = "\(record.file): \(error)"
        return scorer.result
    }
    let rmssd = record.trueRMSSD
    return scorer.finish(restarts: engine.restarts, duration: record.duration, rmssdTruth: rmssd.map { v in { _ in v } })
}
