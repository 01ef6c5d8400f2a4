import Foundation
import GlassesBridge
import GlassesMedia
import GlassesSimulator
import GlassesVideo
import Synchronization
import Testing
import WearablesKit

/// Network streams as a source (`--device rtmp://…`, `srt://…`, `rtsp://…`, `udp://…`), out of process, with the
/// ffmpeg CLI as the publisher and GStreamer's RTSP server as a server to pull from: peers no one here wrote. Every
/// test starts its own bridge and publishers on 127.0.0.1 with a free port, waits with bounds, and stops what it
/// started.
///
/// The clips are the simulator's rendered person, rendered once as Y4M by `glasses-sim` and encoded by ffmpeg the
/// way phone apps send it: H.264 main profile with an AAC track in FLV for RTMP, HEVC in MPEG-TS for SRT and UDP.
/// Vitals with known truth (a stable pulse needs about 15 s of stream) are `NetworkStreamRouteTests`'. A publisher
/// that must outlast the run loops its clip: a publisher that leaves before the run ends is a lost stream, and the
/// run exits 69 (as it should).
@Suite("network streams through libavformat (out of process, ffmpeg as publisher)", .serialized)
struct NetworkStreamTests {
    // MARK: RTMP

    @Test("RTMP listener: H.264 with an AAC track from ffmpeg -f flv; frames flow and the accounting identity holds")
    func rtmpCarriesH264WithAudio() throws {
        let clips = try NetworkClips.shared()
        let port = try freePort(udp: false)
        let bridge = try BinaryRunner(["--device", "rtmp://127.0.0.1:\(port)/live/key1234567", "--duration", "8", "--format", "ndjson"])
        let publisher = try Publisher(["-stream_loop", "-1", "-re", "-i", clips.h264FLV, "-c", "copy", "-f", "flv", "rtmp://127.0.0.1:\(port)/live/key1234567"],
                                      after: (port, udp: false))
        let result = bridge.finish(timeout: 60)
        publisher.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lines = try result.lines.map(jsonObject)
        #expect(lines.contains { ($0["message"] as? String)?.contains("h264 504x896 over RTMP (flv); its audio is ignored") == true },
                "stdout: \(result.stdout.prefix(2000))")
        let summary = try #require(lines.last)
        try expectAccountingIdentity(summary)
        let submitted = try #require(summary["framesSubmitted"] as? Int)
        #expect(submitted > 72, "\(summary)")
        // Every line of a stream run, its summary's receivedStream too, is what docs/schema says.
        for line in result.lines {
            let object = try #require(TestJSON.parse(line))
            guard case .string(let kind)? = object["type"] else { Issue.record("no type: \(line)"); continue }
            let problems = JSONSchemaValidator.problems(object, against: try NDJSONSchemaTests.schema(kind))
            #expect(problems.isEmpty, "\(kind): \(problems)")
        }
        // The summary says what was received.
        let received = try #require(summary["receivedStream"] as? [String: Any], "\(summary)")
        #expect(received["protocol"] as? String == "rtmp" && received["container"] as? String == "flv" && received["codec"] as? String == "h264"
                && received["width"] as? Int == 504 && received["height"] as? Int == 896 && received["audio"] as? Bool == true, "\(received)")
    }

    @Test("RTMP listener: a publish to another stream key is refused, said in words, and the listener waits on; the run ends 69 at the connect timeout")
    func rtmpRefusesAnotherKey() throws {
        let clips = try NetworkClips.shared()
        let port = try freePort(udp: false)
        let bridge = try BinaryRunner(["--device", "rtmp://127.0.0.1:\(port)/live/rightkey99", "--connect-timeout", "6"])
        let publisher = try Publisher(["-re", "-i", clips.h264FLV, "-t", "3", "-c", "copy", "-f", "flv", "rtmp://127.0.0.1:\(port)/live/wrongkey99"],
                                      after: (port, udp: false))
        let publisherStatus = publisher.wait(timeout: 20)
        let result = bridge.finish(timeout: 30)
        #expect(result.status == 69, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("refused a publisher on rtmp://127.0.0.1:\(port)/live/…: it published to a stream key other than the configured one"),
                "stdout: \(result.stdout)")
        #expect(result.stderr.contains("no publisher came to rtmp://127.0.0.1:\(port)/live/… within the 6 s connect timeout"))
        #expect(!result.stdout.contains("wrongkey99") && !result.stderr.contains("rightkey99"), "a key was printed")
        #expect(result.stdout.contains("received 0"), "a frame of the refused publisher was taken: \(result.stdout)")
        #expect(publisherStatus != 0, "the publisher to the wrong key was not cut off")
    }

    @Test("RTMP listener: a publisher killed mid-run is listened for again, and the restarted one streams; reconnects counted")
    func rtmpPublisherKilledAndRestarted() throws {
        let clips = try NetworkClips.shared()
        let port = try freePort(udp: false)
        let url = "rtmp://127.0.0.1:\(port)/live/k"
        // No fixed duration (a loaded machine connects slower): the run is ended by SIGINT once the restarted
        // publisher's frames have flowed; 90 s bounds it.
        let bridge = try BinaryRunner(["--device", url, "--token", "k", "--duration", "90", "--format", "ndjson"])
        let first = try Publisher(["-stream_loop", "-1", "-re", "-i", clips.h264FLV, "-c", "copy", "-f", "flv", url], after: (port, udp: false))
        #expect(bridge.waitForOutput(timeout: 20) { $0.contains("\"framesSubmitted\":") && Self.lastSubmitted($0) >= 48 },
                "the first publisher's frames did not flow")
        first.kill()
        #expect(bridge.waitForOutput(timeout: 10) { $0.contains("waiting for the publisher to connect again") })
        let before = Self.lastSubmitted(bridge.stdoutSoFar)
        let second = try Publisher(["-stream_loop", "-1", "-re", "-i", clips.h264FLV, "-c", "copy", "-f", "flv", url], after: (port, udp: false))
        #expect(bridge.waitForOutput(timeout: 45) { Self.lastSubmitted($0) >= before + 48 }, "no frames after the restart")
        bridge.send(SIGINT)
        let result = bridge.finish(timeout: 30)
        second.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let summary = try jsonObject(try #require(result.lines.last))
        try expectAccountingIdentity(summary)
        #expect(summary["reconnects"] as? Int == 1, "\(summary)")
        let submitted = try #require(summary["framesSubmitted"] as? Int)
        #expect(submitted >= before + 48, "no frames after the restart: \(before) then \(submitted)")
    }

    // MARK: SRT

    @Test("SRT listener with a passphrase from GLASSES_TOKEN: HEVC in MPEG-TS from ffmpeg; the accounting identity holds")
    func srtListenerCarriesHEVC() throws {
        let clips = try NetworkClips.shared()
        let port = try freePort(udp: true)
        let bridge = try BinaryRunner(["--device", "srt://127.0.0.1:\(port)?mode=listener", "--duration", "8", "--format", "ndjson"],
                                      environment: ["GLASSES_TOKEN": "passphrase-0123"])
        let publisher = try Publisher(["-stream_loop", "-1", "-re", "-i", clips.hevcTS, "-c", "copy", "-f", "mpegts", "srt://127.0.0.1:\(port)?passphrase=passphrase-0123"],
                                      after: (port, udp: true))
        let result = bridge.finish(timeout: 60)
        publisher.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("hevc 504x896 over SRT (mpegts)"))
        #expect(!result.stdout.contains("passphrase-0123"))
        try expectFramesFlowed(result, moreThan: 100)
    }

    @Test("SRT listener: srt-live-transmit (Debian's srt-tools) as a second SRT client, fed MPEG-TS at the clip's pace")
    func srtLiveTransmitPublishes() throws {
        let clips = try NetworkClips.shared()
        let port = try freePort(udp: true)
        let bridge = try BinaryRunner(["--device", "srt://127.0.0.1:\(port)?mode=listener", "--token", "passphrase-0123", "--duration", "6",
                                       "--format", "ndjson"])
        try #require(waitForListener(port: port, udp: true, timeout: 15))
        // ffmpeg only paces the file (-re, copied, to standard output); srt-live-transmit is the SRT client.
        let pipe = Pipe()
        let pacer = Process(), transmit = Process()
        pacer.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        pacer.arguments = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-stream_loop", "-1", "-re", "-i", clips.hevcTS,
                           "-c", "copy", "-f", "mpegts", "-"]
        pacer.standardOutput = pipe
        pacer.standardError = FileHandle.nullDevice
        transmit.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        transmit.arguments = ["srt-live-transmit", "-q", "file://con", "srt://127.0.0.1:\(port)?passphrase=passphrase-0123"]
        transmit.standardInput = pipe
        transmit.standardOutput = FileHandle.nullDevice
        transmit.standardError = FileHandle.nullDevice
        try transmit.run()
        try pacer.run()
        // Only the two children hold the pipe now: when one goes, the other sees the end of it.
        try pipe.fileHandleForReading.close()
        try pipe.fileHandleForWriting.close()
        defer {
            // SIGKILL: once the bridge has gone, srt-live-transmit stops reading and ffmpeg blocks writing to the
            // full pipe, where neither heeds SIGTERM.
            for process in [pacer, transmit] where process.isRunning { kill(process.processIdentifier, SIGKILL) }
            pacer.waitUntilExit()
            transmit.waitUntilExit()
        }
        let result = bridge.finish(timeout: 40)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("hevc 504x896 over SRT (mpegts)"))
        try expectFramesFlowed(result, moreThan: 72)
    }

    @Test("SRT: a publisher with a wrong passphrase is refused in SRT's handshake (the publisher says so), and no frame is taken")
    func srtRefusesAWrongPassphrase() throws {
        let clips = try NetworkClips.shared()
        let port = try freePort(udp: true)
        let bridge = try BinaryRunner(["--device", "srt://127.0.0.1:\(port)?mode=listener&passphrase=right-passphrase", "--connect-timeout", "5"])
        let publisher = try Publisher(["-re", "-i", clips.hevcTS, "-t", "3", "-c", "copy", "-f", "mpegts",
                                       "srt://127.0.0.1:\(port)?passphrase=wrong-passphrase&connect_timeout=2000000"], after: (port, udp: true))
        let publisherStatus = publisher.wait(timeout: 20)
        let result = bridge.finish(timeout: 30)
        #expect(publisherStatus != 0, "the publisher with the wrong passphrase got through")
        #expect(publisher.stderr.lowercased().contains("connection") || publisher.stderr.lowercased().contains("reject"),
                "publisher: \(publisher.stderr)")
        #expect(result.status == 69, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("no publisher came to srt://127.0.0.1:\(port)?mode=listener within the 5 s connect timeout"))
        #expect(result.stdout.contains("received 0"))
    }

    @Test("SRT caller: the bridge dials a publisher that listens (ffmpeg -f mpegts 'srt://…?mode=listener'), loopback without a passphrase")
    func srtCallerDialsAListeningPublisher() throws {
        let clips = try NetworkClips.shared()
        let port = try freePort(udp: true)
        // The publisher listens first; the bridge's dial is tried again every 0.25 s until the connect timeout.
        let publisher = try Publisher(["-stream_loop", "-1", "-re", "-i", clips.smallTS, "-c", "copy", "-f", "mpegts", "srt://127.0.0.1:\(port)?mode=listener"], after: nil)
        let result = try BinaryRunner.run(["--device", "srt://127.0.0.1:\(port)", "--duration", "5", "--format", "ndjson"], timeout: 40)
        publisher.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        try expectFramesFlowed(result, moreThan: 24)
    }

    // MARK: RTSP

    @Test("RTSP listener: ffmpeg -f rtsp records H.264 with an AAC track to the bridge (RTP inside the RTSP connection); frames flow and the accounting identity holds")
    func rtspListenerTakesARecordingPublisher() throws {
        let clips = try NetworkClips.shared()
        let port = try freePort(udp: false)
        let bridge = try BinaryRunner(["--device", "rtsp://127.0.0.1:\(port)/cam?mode=listener", "--duration", "6", "--format", "ndjson"])
        let publisher = try Publisher(["-stream_loop", "-1", "-re", "-i", clips.h264FLV, "-c", "copy", "-f", "rtsp", "-rtsp_transport", "tcp",
                                       "rtsp://127.0.0.1:\(port)/cam"], after: (port, udp: false))
        let result = bridge.finish(timeout: 60)
        publisher.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("publisher connected to rtsp://127.0.0.1:\(port)/cam?mode=listener: h264 504x896 over RTSP (rtsp); its audio is ignored"),
                "stdout: \(result.stdout.prefix(2000))")
        try expectFramesFlowed(result, moreThan: 72)
    }

    @Test("RTSP pull from GStreamer's RTSP server (Debian's gst-rtsp-server): H.264 over TCP, HEVC over UDP",
          arguments: [(codec: "h264", transport: "tcp"), (codec: "hevc", transport: "udp")])
    func rtspPullsFromAServer(codec: String, transport: String) throws {
        let clips = try NetworkClips.shared()
        let port = try freePort(udp: false)
        // Video only: with the clip's AAC track as a second stream, GStreamer 1.22's server failed an assertion
        // (gst_rtsp_media_get_rates) on a loaded machine. The RTSP listener test carries the audio track.
        let launch = codec == "h264"
            ? "( filesrc location=\(clips.h264FLV) ! flvdemux name=d d.video ! queue ! h264parse ! rtph264pay name=pay0 pt=96 config-interval=-1 )"
            : "( filesrc location=\(clips.hevcTS) ! tsdemux ! h265parse ! rtph265pay name=pay0 pt=96 config-interval=-1 )"
        let server = try RTSPServer(port: port, launch: launch)
        defer { server.stop() }
        let bridge = try BinaryRunner(["--device", "rtsp://127.0.0.1:\(port)/cam?transport=\(transport)", "--duration", "5", "--format", "ndjson"])
        let result = bridge.finish(timeout: 60)
        #expect(result.status == 0, "stderr: \(result.stderr)\nserver: \(server.output)")
        #expect(result.stdout.contains("publisher connected to rtsp://127.0.0.1:\(port)/cam: \(codec) 504x896 over RTSP (rtsp)"),
                "stdout: \(result.stdout.prefix(2000))")
        try expectFramesFlowed(result, moreThan: 48)
    }

    @Test("RTSP pull: a server that is not there ends the run with 69 at the connect timeout, in words")
    func rtspPullWithNoServerExits69() throws {
        let port = try freePort(udp: false)
        let result = try BinaryRunner.run(["--device", "rtsp://127.0.0.1:\(port)/cam", "--connect-timeout", "2"], timeout: 30)
        #expect(result.status == 69, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("rtsp://127.0.0.1:\(port)/cam did not answer within the 2 s connect timeout"), "\(result.stderr)")
    }

    // MARK: UDP and hostile input

    @Test("UDP MPEG-TS: a resolution change mid-stream (360x640, then 504x896) is survived, with frames after the change")
    func udpSurvivesAResolutionChange() throws {
        let clips = try NetworkClips.shared()
        let port = try freePort(udp: true)
        let bridge = try BinaryRunner(["--device", "udp://127.0.0.1:\(port)", "--duration", "9", "--format", "ndjson"])
        let publisher = try Publisher(["-re", "-i", clips.changeTS, "-c", "copy", "-f", "mpegts", "udp://127.0.0.1:\(port)?pkt_size=1316"],
                                      after: (port, udp: true))
        let result = bridge.finish(timeout: 40)
        publisher.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lines = try result.lines.map(jsonObject)
        let change = try #require(lines.firstIndex { ($0["message"] as? String)?.contains("changed from 360x640 to 504x896") == true },
                                  "no size change seen: \(result.stdout.prefix(3000))")
        let changedAt = try #require(lines[change]["t"] as? Double)
        let summary = try #require(lines.last)
        try expectAccountingIdentity(summary)
        // Frames submitted after the change: the last stats line before it against the summary.
        let before = lines[..<change].last { $0["type"] as? String == "stats" }?["framesSubmitted"] as? Int ?? 0
        let submitted = try #require(summary["framesSubmitted"] as? Int)
        #expect(submitted - before >= 48, "only \(submitted - before) frames after the change at \(changedAt) s")
        #expect((summary["droppedByReason"] as? [String: Any])?["decodeFailed"] == nil, "\(summary)")
        // The summary gives the size last received.
        let received = summary["receivedStream"] as? [String: Any]
        #expect(received?["width"] as? Int == 504 && received?["height"] as? Int == 896 && received?["codec"] as? String == "hevc", "\(summary)")
    }

    @Test("UDP: garbage datagrams (random bytes, and MPEG-TS sync bytes with random payloads) neither crash nor hang the bridge; a real publisher is taken afterwards")
    func udpSurvivesGarbage() throws {
        let clips = try NetworkClips.shared()
        let port = try freePort(udp: true)
        let bridge = try BinaryRunner(["--device", "udp://127.0.0.1:\(port)", "--duration", "8", "--format", "ndjson"])
        try #require(waitForListener(port: port, udp: true, timeout: 15))
        try sendGarbage(to: port, seconds: 2)
        let publisher = try Publisher(["-re", "-i", clips.smallTS, "-c", "copy", "-f", "mpegts", "udp://127.0.0.1:\(port)?pkt_size=1316"],
                                      after: nil)
        let result = bridge.finish(timeout: 40)
        publisher.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        try expectFramesFlowed(result, moreThan: 24)
    }

    @Test("a source that never starts ends with exit 69 within the connect timeout, in words")
    func aSourceThatNeverStartsExits69() throws {
        let port = try freePort(udp: true)
        let started = Date()
        let result = try BinaryRunner.run(["--device", "udp://127.0.0.1:\(port)", "--connect-timeout", "2"], timeout: 30)
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 69, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("no publisher came to udp://127.0.0.1:\(port) within the 2 s connect timeout"), "\(result.stderr)")
        #expect(elapsed < 8, "took \(elapsed) s")
        let rtmpPort = try freePort(udp: false)
        let rtmp = try BinaryRunner.run(["--device", "rtmp://127.0.0.1:\(rtmpPort)/live/abc", "--connect-timeout", "1.5"], timeout: 30)
        #expect(rtmp.status == 69, "stderr: \(rtmp.stderr)")
        #expect(rtmp.stderr.contains("within the 1.5 s connect timeout"))
    }

    @Test("an address already in use ends the run at once with 69, in words (not a wait for a publisher)")
    func anAddressInUseExits69() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound)
        let port = UInt16(bigEndian: address.sin_port)
        let started = Date()
        let result = try BinaryRunner.run(["--device", "rtmp://127.0.0.1:\(port)/live/abc"], timeout: 30)
        #expect(result.status == 69, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("Cannot listen on rtmp://127.0.0.1:\(port)/live/…: address already in use"), "\(result.stderr)")
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test("SIGINT while listening for a publisher ends the run at once (the blocking open is interrupted), exit 69 noFrames")
    func ctrlCWhileListeningDoesNotHang() throws {
        let port = try freePort(udp: false)
        let bridge = try BinaryRunner(["--device", "rtmp://127.0.0.1:\(port)/live/abc", "--format", "ndjson"])
        try #require(waitForListener(port: port, udp: false, timeout: 15))
        let sent = Date()
        bridge.send(SIGINT)
        let result = bridge.finish(timeout: 15)
        #expect(Date().timeIntervalSince(sent) < 5)
        #expect(result.status == 69, "stderr: \(result.stderr)")
    }

    @Test("stopping a run that waits for a publisher closes the listening socket at once: the blocking open is interrupted, not left to its deadline")
    func stopClosesTheListeningSocket() async throws {
        let port = try freePort(udp: false)
        let address = try NetworkStreamAddress(parsing: "rtmp://127.0.0.1:\(port)/live/abc").resolvingSecret(token: nil)
        let pipeline = BridgePipeline(settings: BridgeSettings(streamConfiguration: StreamConfiguration()),
                                      source: .stream(address, connectTimeout: .seconds(60)),
                                      clock: .realTime(DispatchEventScheduler(label: "test.stream-stop"))) { _, _ in }
        let run = Task { await pipeline.run() }
        // The run's task may wait for a thread of the cooperative pool while other suites hold both of a loaded
        // 2-core machine's (a clean-clone CI run saw no listener within 15 s); what is checked is the close below.
        try #require(waitForListener(port: port, udp: false, timeout: 60))
        pipeline.requestStop(reason: "signal")
        let result = await run.value
        #expect(result.summary.failure?.kind == .noFrames || result.summary.failure == nil, "\(String(describing: result.summary.failure))")
        // Without the interrupt the open would listen on until its 60 s deadline.
        #expect(waitForListener(port: port, udp: false, timeout: 3, gone: true), "the listener was still open 3 s after the run ended")
    }

    /// The seed of the corrupted stream's damage.
    static let damageSeed: UInt64 = 20_261_206

    @Test("a hostile publisher: the real HEVC stream with its payload bytes corrupted (headers kept, so every damaged NAL unit reaches the bridge) is survived, and a clean publisher is taken afterwards")
    func udpSurvivesACorruptedStream() throws {
        let clips = try NetworkClips.shared()
        let port = try freePort(udp: true)
        let bridge = try BinaryRunner(["--device", "udp://127.0.0.1:\(port)", "--duration", "9", "--format", "ndjson"])
        try #require(waitForListener(port: port, udp: true, timeout: 15))
        // Every 188-byte TS packet keeps its 4-byte header (so the demuxer hands the PES on); a third of the packets
        // get 1 to 8 random bytes of their payload replaced, from a fixed seed: the same damage on every run (an
        // unseeded one once spared every NAL unit the decoder cares about, and the test failed by chance).
        var generator = SeededRandom(seed: Self.damageSeed)
        var stream = [UInt8](try Data(contentsOf: URL(fileURLWithPath: clips.smallTS)))
        for start in stride(from: 0, to: stream.count - 188, by: 188) where Int.random(in: 0 ..< 3, using: &generator) == 0 {
            for _ in 0 ..< Int.random(in: 1 ... 8, using: &generator) {
                stream[start + Int.random(in: 4 ..< 188, using: &generator)] = UInt8.random(in: 0 ... 255, using: &generator)
            }
        }
        let corrupted = FileManager.default.temporaryDirectory.appendingPathComponent("corrupted-\(getpid())-\(port).ts")
        try Data(stream).write(to: corrupted)
        defer { try? FileManager.default.removeItem(at: corrupted) }
        let hostile = try Publisher(["-re", "-i", corrupted.path, "-c", "copy", "-f", "mpegts", "udp://127.0.0.1:\(port)?pkt_size=1316"], after: nil)
        _ = hostile.wait(timeout: 20)
        let peak = try #require(bridge.peakResidentBytes)
        #expect(peak < 300 << 20, "the bridge's peak resident memory was \(peak >> 20) MB after the damaged stream")
        let clean = try Publisher(["-re", "-i", clips.smallTS, "-c", "copy", "-f", "mpegts", "udp://127.0.0.1:\(port)?pkt_size=1316"], after: nil)
        let result = bridge.finish(timeout: 40)
        clean.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        // The clean publisher's 3 s arrive whole after the damaged ones: more than 2 s of frames were taken.
        let summary = try expectFramesFlowed(result, moreThan: 48)
        // The damage reached the decoder (it was not all lost before it): frames were skipped as damaged.
        let dropped = summary["droppedByReason"] as? [String: Int] ?? [:]
        #expect((dropped["decodeFailed"] ?? 0) + (dropped["awaitingKeyframe"] ?? 0) > 0, "\(summary)")
    }

    @Test("a hostile publisher whose HEVC parameter set declares 16384x16384 is refused before anything is allocated for it, said in words; a clean publisher is taken afterwards")
    func udpRefusesAnAbsurdPictureSize() throws {
        let clips = try NetworkClips.shared()
        let port = try freePort(udp: true)
        // 2 s of a real 360x640 HEVC stream whose in-band SPS (at every keyframe) is rewritten to say 16384x16384.
        let encoder = try HEVCEncoder(width: 360, height: 640, frameRate: 24)
        var configuration = encoder.codecConfiguration
        configuration.sequenceParameterSets = [try #require(HostileSPS.resized(configuration.sequenceParameterSets[0], width: 16384, height: 16384))]
        // (x265's conformance window crops 8 columns: 16376 wide once cropped.)
        #expect(HEVCPictureSize(sequenceParameterSet: configuration.sequenceParameterSets[0]).map { [$0.width, $0.height] } == [16376, 16384])
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("absurd-\(getpid())-\(port).ts").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try HEVCFileWriter(path: path, codecConfiguration: configuration)
        for index in 0 ..< 48 {
            let image = try #require(RawVideoImage(width: 360, height: 640, lumaBytesPerRow: 360, chromaBytesPerRow: 360,
                                                   data: Data(repeating: UInt8(truncatingIfNeeded: index * 5), count: 360 * 640 * 3 / 2)))
            for sample in try encoder.encode(image, presentationTimeUs: Int64(index) * 41_667) {
                try writer.write(HEVCSample(data: sample.data, isKeyframe: sample.isKeyframe, codecConfiguration: configuration),
                                 presentationTimeUs: sample.presentationTimeUs)
            }
        }
        try writer.finish()

        let bridge = try BinaryRunner(["--device", "udp://127.0.0.1:\(port)", "--duration", "9", "--format", "ndjson"])
        try #require(waitForListener(port: port, udp: true, timeout: 15))
        try sendFile(path, to: port, seconds: 2)
        let clean = try Publisher(["-re", "-i", clips.smallTS, "-c", "copy", "-f", "mpegts", "udp://127.0.0.1:\(port)?pkt_size=1316"], after: nil)
        // Bounded memory: one 16376x16384 picture alone would take 402 MB; the bridge peaks near 80 MB here.
        #expect(bridge.waitForOutput(timeout: 30) { $0.contains("publisher connected to udp://127.0.0.1:\(port): hevc 360x640") })
        let peak = try #require(bridge.peakResidentBytes)
        #expect(peak < 300 << 20, "the bridge's peak resident memory was \(peak >> 20) MB")
        let result = bridge.finish(timeout: 40)
        clean.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("refused a publisher on udp://127.0.0.1:\(port): its HEVC parameter set declares pictures of 16376×16384"),
                "the absurd size was not refused in words: \(result.stdout.prefix(3000))")
        // The clean publisher starts as the hostile one ends; its first second may go by while the port is bound
        // again and its stream analysed.
        try expectFramesFlowed(result, moreThan: 24)
    }

    // MARK: Usage

    @Test("the secret rules: off loopback RTMP needs a key and SRT a passphrase; UDP and an RTSP listener listen on loopback only; each refusal says what to use (64)")
    func secretRulesAreUsageErrors() throws {
        let cases: [([String], String)] = [
            (["--device", "udp://0.0.0.0:7300"], "Use udp://127.0.0.1:7300 for a publisher on this machine, or srt://0.0.0.0:7300?mode=listener with --token PASSPHRASE"),
            (["--device", "srt://0.0.0.0:7200?mode=listener"], "give an SRT passphrase"),
            (["--device", "srt://0.0.0.0:7200?mode=listener", "--token", "short"], "10 to 79 characters"),
            (["--device", "rtmp://0.0.0.0:1935/live"], "give the stream key the app publishes to"),
            (["--device", "rtmp://0.0.0.0:1935/live/a", "--token", "b"], "differ"),
            (["--device", "udp://127.0.0.1:7300", "--token", "x"], "UDP carries no secret"),
            (["--device", "rtsp://0.0.0.0:8554/cam?mode=listener"], "listens on loopback only: libavformat's RTSP server checks no credentials"),
            (["--device", "rtsp://10.0.0.5:8554/cam", "--token", "pw"], "takes --token as the password of the URL's user"),
            (["--device", "udp://127.0.0.1:7300", "--fps", "30"], "the publisher chooses the codec, size and frame rate"),
        ]
        for (arguments, fragment) in cases {
            let result = try BinaryRunner.run(arguments, timeout: 20)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(fragment), "\(arguments): \(result.stderr)")
        }
        let secret = try BinaryRunner.run(["--device", "srt://0.0.0.0:7200?mode=listener&passphrase=abc", "--duration", "1"], timeout: 20)
        #expect(secret.status == 64)
        #expect(!secret.stderr.contains("passphrase=abc"), "the passphrase was printed: \(secret.stderr)")
    }

    // MARK: Helpers

    static func lastSubmitted(_ ndjson: String) -> Int {
        for line in ndjson.split(separator: "\n").reversed() where line.contains("\"type\":\"stats\"") {
            if let object = try? jsonObject(String(line)), let value = object["framesSubmitted"] as? Int { return value }
        }
        return 0
    }
}

/// received = submitted + rejected + dropped (+ in flight, 0 in the summary).
/// The run's summary, once it holds the accounting identity and more than `frames` frames were submitted.
@discardableResult
func expectFramesFlowed(_ result: BinaryRunner.Output, moreThan frames: Int, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
    let summary = try jsonObject(try #require(result.lines.last, sourceLocation: sourceLocation))
    try expectAccountingIdentity(summary)
    #expect((summary["framesSubmitted"] as? Int ?? 0) > frames, "\(summary)", sourceLocation: sourceLocation)
    return summary
}

/// Vitals through a route, judged as the frame-rate table judges them. The publisher is a debug `glasses-sim`,
/// which a loaded machine (the suite runs in parallel) may keep below the 15 fps asked. When frames arrived at 13/s
/// or more, the pulse values the engine measured over the run's last 5 s lie within 5 bpm of `truth` and the summary
/// has a stable pulse within 5 bpm; below 12/s (the table's 15 fps with a fifth of slack) the summary withholds it
/// for the frame rate; in between, either.
func expectPulseThroughRoute(_ result: BinaryRunner.Output, truth: Double, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let lines = try result.lines.map(jsonObject)
    let summary = try #require(lines.last, sourceLocation: sourceLocation)
    let end = summary["t"] as? Double ?? 0
    var values: [Double] = []
    for line in lines where line["type"] as? String == "metrics" && (line["t"] as? Double ?? 0) >= end - 5 {
        let cardio = (line["metrics"] as? [String: Any])?["cardio"] as? [String: Any]
        for sample in cardio?["pulseRate"] as? [[String: Any]] ?? [] {
            if let value = sample["value"] as? Double { values.append(value) }
        }
    }
    values.sort()
    let streaming = lines.first { $0["type"] as? String == "state" && $0["state"] as? String == "streaming" }?["t"] as? Double ?? 0
    let rate = Double(summary["framesReceived"] as? Int ?? 0) / max(1, end - streaming)
    if rate >= 13 {
        let median = try #require(values.isEmpty ? nil : values[values.count / 2], "no pulse value in the last 5 s", sourceLocation: sourceLocation)
        #expect(abs(median - truth) <= 5, "measured pulse \(median), truth \(truth)", sourceLocation: sourceLocation)
        #expect(summary["pulseRate"] as? Double != nil, "no stable pulse at \(rate) frames/s: \(summary)", sourceLocation: sourceLocation)
    }
    if let pulse = summary["pulseRate"] as? Double {
        #expect(abs(pulse - truth) <= 5, "summary pulse \(pulse), truth \(truth)", sourceLocation: sourceLocation)
    } else {
        let code = (summary["pulseUnavailable"] as? [String: Any])?["code"] as? String
        #expect(rate < 13 && code == "frameRate", "no stable pulse at \(rate) frames/s: \(summary)", sourceLocation: sourceLocation)
    }
    if rate < 12 { #expect(summary["pulseRate"] as? Double == nil, "a stable pulse at \(rate) frames/s", sourceLocation: sourceLocation) }
}

func expectAccountingIdentity(_ summary: [String: Any]) throws {
    let received = try #require(summary["framesReceived"] as? Int, "\(summary)")
    let submitted = try #require(summary["framesSubmitted"] as? Int)
    let rejected = try #require(summary["framesRejected"] as? Int)
    let dropped = try #require(summary["framesDropped"] as? Int)
    #expect(summary["framesInFlight"] as? Int == 0)
    #expect(received == submitted + rejected + dropped, "\(summary)")
}

/// Waits (polling, bounded) until a socket is bound to 127.0.0.1:`port` or to every address: listening (TCP) or
/// bound (UDP), read from /proc/net; with `gone`, until none is.
func waitForListener(port: UInt16, udp: Bool, timeout: Double, gone: Bool = false) -> Bool {
    let hexPort = String(format: ":%04X", port)
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        let table = (try? String(contentsOfFile: udp ? "/proc/net/udp" : "/proc/net/tcp", encoding: .utf8)) ?? ""
        let listening = table.split(separator: "\n").dropFirst().contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[1].hasSuffix(hexPort) && (udp || fields[3] == "0A")  // 0A: LISTEN
        }
        if listening != gone { return true }
        Thread.sleep(forTimeInterval: 0.02)
    }
    return false
}

/// A free port on 127.0.0.1 (TCP or UDP), found by binding port 0 and closing the socket again.
func freePort(udp: Bool) throws -> UInt16 {
    let fd = socket(AF_INET, Int32(udp ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue), 0)
    try #require(fd >= 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    try #require(bound == 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    try #require(named == 0)
    return UInt16(bigEndian: address.sin_port)
}

/// Sends garbage datagrams to 127.0.0.1:`port` for `seconds`: random bytes, then 188-byte packets that start with
/// MPEG-TS's sync byte and carry random headers and payloads (absurd PIDs, lengths and timestamps).
func sendGarbage(to port: UInt16, seconds: Double) throws {
    try withDatagramSocket(to: port) { send in
        var generator = SystemRandomNumberGenerator()
        let end = Date().addingTimeInterval(seconds)
        var count = 0
        while Date() < end {
            var bytes = (0 ..< 1316).map { _ in UInt8.random(in: 0 ... 255, using: &generator) }
            if count % 2 == 1 { for packet in 0 ..< 7 { bytes[packet * 188] = 0x47 } }
            send(bytes)
            count += 1
            if count % 64 == 0 { Thread.sleep(forTimeInterval: 0.005) }
        }
    }
}

/// Runs `body` with a function that sends one datagram to 127.0.0.1:`port` (a UDP socket of its own, closed after).
func withDatagramSocket(to port: UInt16, _ body: (_ send: ([UInt8]) -> Void) throws -> Void) throws {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    try #require(fd >= 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    try body { bytes in
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }
}

/// Sends a file's bytes to 127.0.0.1:`port` as UDP datagrams of seven TS packets, spread over `seconds`: a publisher
/// that sends exactly what it was given (ffmpeg would parse, and perhaps refuse, a hostile stream).
func sendFile(_ path: String, to port: UInt16, seconds: Double) throws {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    let chunk = 7 * 188
    let count = max(1, (bytes.count + chunk - 1) / chunk)
    try withDatagramSocket(to: port) { send in
        for index in 0 ..< count {
            send(Array(bytes[index * chunk ..< min(bytes.count, (index + 1) * chunk)]))
            Thread.sleep(forTimeInterval: seconds / Double(count))
        }
    }
}

/// HEVC sequence parameter sets rewritten to declare another picture size (a hostile publisher's).
enum HostileSPS {
    /// `unit` (an SPS NAL unit with its 2-byte header) with `pic_width_in_luma_samples` and
    /// `pic_height_in_luma_samples` replaced; nil for an SPS this cannot walk (more than one sub-layer, 4:4:4).
    static func resized(_ unit: Data, width: Int, height: Int) -> Data? {
        let bytes = [UInt8](unit)
        guard bytes.count > 16 else { return nil }
        let rbsp = EmulationPrevention.removed(from: bytes.dropFirst(2))
        var bits = rbsp.flatMap { byte in (0 ..< 8).map { (byte >> (7 - $0)) & 1 } }
        // vps id (4), max_sub_layers_minus1 (3), temporal_id_nesting (1), profile_tier_level for one layer (96).
        guard (bits[4] | bits[5] | bits[6]) == 0 else { return nil }
        var position = 104
        func ue() -> Int? {
            var zeros = 0
            while position < bits.count, bits[position] == 0 { zeros += 1; position += 1 }
            guard zeros < 32, position + zeros < bits.count else { return nil }
            position += 1
            var value = 1
            for _ in 0 ..< zeros { value = value << 1 | Int(bits[position]); position += 1 }
            return value - 1
        }
        func encoded(_ value: Int) -> [UInt8] {
            let code = value + 1
            let length = Int.bitWidth - code.leadingZeroBitCount
            return Array(repeating: 0, count: length - 1) + (0 ..< length).map { UInt8((code >> (length - 1 - $0)) & 1) }
        }
        guard ue() != nil, let chroma = ue(), chroma != 3 else { return nil }
        let sizeStart = position
        guard ue() != nil, ue() != nil else { return nil }
        bits.replaceSubrange(sizeStart ..< position, with: encoded(width) + encoded(height))
        // The RBSP ends with its stop bit (the last 1) and zeros to the byte: moved, as the fields' lengths changed.
        while bits.last == 0 { bits.removeLast() }
        while bits.count % 8 != 0 { bits.append(0) }
        var packed: [UInt8] = []
        for start in stride(from: 0, to: bits.count, by: 8) {
            packed.append(bits[start ..< start + 8].reduce(0) { $0 << 1 | $1 })
        }
        return Data(bytes.prefix(2) + EmulationPrevention.inserted(into: packed))
    }
}

/// An ffmpeg CLI process (the publisher), its standard error kept.
final class Publisher: Sendable {
    private let process = Process()
    private let errorText = Mutex("")
    private let done = DispatchSemaphore(value: 0)

    /// Starts `ffmpeg ARGUMENTS`; with `after`, once the bridge listens on 127.0.0.1:`port` (TCP for RTMP, UDP for
    /// SRT and UDP), as the kernel's socket tables say.
    init(_ arguments: [String], after bridge: (port: UInt16, udp: Bool)?) throws {
        if let bridge {
            try #require(waitForListener(port: bridge.port, udp: bridge.udp, timeout: 15), "the bridge did not start listening on \(bridge.port)")
        }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error"] + arguments
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let handle = err.fileHandleForReading
        let thread = Thread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                errorText.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
            done.signal()
        }
        thread.start()
    }

    var stderr: String { errorText.withLock { $0 } }

    /// Waits for the publisher to end (killing it after `timeout` s) and returns its exit status.
    func wait(timeout: Double) -> Int32 {
        if done.wait(timeout: .now() + timeout) == .timedOut { kill() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Ends the publisher as a person would (SIGTERM), if it still runs.
    func stop() {
        if process.isRunning { process.terminate() }
        _ = wait(timeout: 10)
    }

    /// Sends the publisher a signal (SIGSTOP and SIGCONT: a stall with its connection open).
    func signal(_ value: Int32) {
        if process.isRunning { Foundation.kill(process.processIdentifier, value) }
    }

    /// Kills the publisher outright (SIGKILL): its connection is cut without a goodbye.
    func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }
}

/// GStreamer's RTSP server (Debian's `gir1.2-gst-rtsp-server-1.0`, through Debian's own Python and its `gi`)
/// serving one launch line at `rtsp://127.0.0.1:PORT/cam`, for the bridge to pull: a server no one here wrote.
final class RTSPServer: Sendable {
    private static let script = """
        import sys, gi
        gi.require_version("Gst", "1.0"); gi.require_version("GstRtspServer", "1.0")
        from gi.repository import Gst, GstRtspServer, GLib
        Gst.init(None)
        server = GstRtspServer.RTSPServer(); server.set_address("127.0.0.1"); server.set_service(sys.argv[1])
        factory = GstRtspServer.RTSPMediaFactory(); factory.set_launch(sys.argv[2]); factory.set_shared(True)
        server.get_mount_points().add_factory("/cam", factory)
        if server.attach(None) == 0: sys.exit("cannot listen on port " + sys.argv[1])
        print("ready", flush=True)
        GLib.MainLoop().run()
        """
    private let process = Process()
    private let log: URL

    /// Starts the server and waits (15 s at most) until it listens.
    init(port: UInt16, launch: String) throws {
        log = FileManager.default.temporaryDirectory.appendingPathComponent("rtsp-server-\(getpid())-\(port).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.script, String(port), launch]
        process.standardError = try FileHandle(forWritingTo: log)
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        if !waitForListener(port: port, udp: false, timeout: 15) {
            stop()
            Issue.record("GStreamer's RTSP server did not start (Scripts/setup installs gir1.2-gst-rtsp-server-1.0): \(output)")
            throw CancellationError()
        }
    }

    /// What the server wrote on standard error (GStreamer's warnings).
    var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Stops the server: SIGKILL (the test runner's threads block SIGTERM, and children inherit the mask; a
    /// server has nothing to flush).
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: log)
    }
}

/// The clips the publishers send, made once per test run in a temporary folder.
struct NetworkClips: Sendable {
    /// 8 s of the rendered person, 504x896 (scaled from 360x640) 24 fps, H.264 main profile with an AAC track, in
    /// FLV (RTMP).
    let h264FLV: String
    /// Its first 8 s as HEVC in MPEG-TS (SRT, UDP).
    let hevcTS: String
    /// Its first 3 s at 360x640, HEVC in MPEG-TS.
    let smallTS: String
    /// 360x640 for 3 s, then 504x896 for 3 s, HEVC in one MPEG-TS stream (a resolution change mid-stream).
    let changeTS: String
    /// 16 s of a test pattern, 504x896 24 fps, H.264 without B-frames and a keyframe a second, in MPEG-TS: a stream
    /// longer than a check's run, published with `-re -c copy` (no splice, and no live encode to fall behind on a
    /// loaded machine).
    let patternTS: String

    private static let made = Mutex<Result<NetworkClips, any Error>?>(nil)

    static func shared() throws -> NetworkClips {
        try made.withLock { made in
            if made == nil { made = Result { try make() } }
            return try made!.get()
        }
    }

    private static func make() throws -> NetworkClips {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("glasses-network-clips-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // The clips serve every test of the run; the folder goes when the test process exits.
        atexit {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("glasses-network-clips-\(getpid())")
            try? FileManager.default.removeItem(at: folder)
        }
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        let raw = path("face.y4m")
        // Rendered at 360x640 (half the pixels of 504x896: the fixture's main cost in a debug build); the 504x896
        // streams are scaled up from it by ffmpeg.
        let sim = try BinaryRunner.run(["--write", raw, "--codec", "raw", "--duration", "8", "--resolution", "low", "--fps", "24",
                                        "--seed", "1", "--quiet"], binary: "glasses-sim", timeout: 120)
        try #require(sim.status == 0, "glasses-sim: \(sim.stderr)")
        defer { try? FileManager.default.removeItem(atPath: raw) }
        let x265 = ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error", "-g", "24", "-pix_fmt", "yuv420p"]
        try ffmpeg(["-i", raw, "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100",
                    "-map", "0:v", "-map", "1:a", "-shortest", "-vf", "scale=504:896", "-c:v", "libx264", "-profile:v", "main", "-preset", "veryfast", "-g", "24",
                    "-b:v", "1500k", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "64k", "-f", "flv", path("face_h264.flv"),
                    "-map", "0:v", "-t", "8", "-vf", "scale=504:896"] + x265 + ["-b:v", "1500k", "-f", "mpegts", path("face_hevc.ts"),
                    "-map", "0:v", "-t", "3"] + x265 + ["-b:v", "800k", "-f", "mpegts", path("small.ts"),
                    "-map", "0:v", "-ss", "3", "-t", "3", "-vf", "scale=504:896"] + x265 + ["-b:v", "1500k", "-f", "mpegts", path("large.ts")])
        // Two MPEG-TS streams one after the other, as a publisher that re-opens its encoder at a new size sends them.
        let change = try Data(contentsOf: URL(fileURLWithPath: path("small.ts"))) + Data(contentsOf: URL(fileURLWithPath: path("large.ts")))
        try change.write(to: URL(fileURLWithPath: path("change.ts")))
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=504x896:rate=24", "-t", "16", "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency",
                    "-g", "24", "-pix_fmt", "yuv420p", "-b:v", "1500k", "-f", "mpegts", path("pattern.ts")])
        return NetworkClips(h264FLV: path("face_h264.flv"), hevcTS: path("face_hevc.ts"), smallTS: path("small.ts"),
                            changeTS: path("change.ts"), patternTS: path("pattern.ts"))
    }

    private static func ffmpeg(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-y"] + arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "ffmpeg \(arguments.joined(separator: " "))")
    }
}
