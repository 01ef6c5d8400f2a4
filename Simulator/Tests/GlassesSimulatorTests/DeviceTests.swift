import Foundation
import GlassesLink
import Testing
import WearablesKit
@testable import GlassesSimulator

@Suite("Simulated glasses over the link protocol")
struct DeviceTests {
    @Test("hello answers with device info and state")
    func hello() throws {
        let rig = try Rig()
        rig.start()
        let control = rig.probe.controlMessages
        guard case .hello(let info) = control.first else { Issue.record("no hello: \(control)"); return }
        #expect(info.deviceType == .simulated)
        #expect(info.supportedPhotoFormats == [.jpeg])
        #expect(control.dropFirst().first == .deviceState(DeviceState()))
        #expect(rig.probe.sessionEvents == [.started])
    }

    @Test("raw stream: starting, streaming, NV12 samples at the frame rate with device-clock timestamps")
    func rawStream() throws {
        let rig = try Rig()
        rig.start(config(.raw, .low, 15))
        rig.run(2)
        #expect(rig.probe.streamEvents == [.starting(config()), .streaming(config())])
        let samples = rig.probe.samples
        #expect(samples.count >= 30 && samples.count <= 31)
        for s in samples {
            #expect(s.format == .nv12(width: 360, height: 640, lumaBytesPerRow: 360, chromaBytesPerRow: 360))
            #expect(s.payload.count == 360 * 640 * 3 / 2)
            #expect(s.isKeyframe)
        }
        let deltas = zip(samples.dropFirst(), samples).map { $0.presentationTimeUs - $1.presentationTimeUs }
        #expect(deltas.allSatisfy { abs($0 - 66_667) <= 1 })
        rig.probe.send(.stopStream())
        rig.run(0.5)
        #expect(rig.probe.streamEvents.last == .stopped)
        let count = rig.probe.samples.count
        rig.run(1)
        #expect(rig.probe.samples.count == count)
    }

    @Test("hvc1 stream: codec configuration first, a keyframe first, length-prefixed NAL units")
    func hevcStream() throws {
        let rig = try Rig()
        rig.start(config(.hvc1, .low, 15))
        rig.run(1.5)
        let control = rig.probe.messages.filter { if case .heartbeat = $0 { false } else { true } }
        let firstConfig = control.firstIndex { if case .codecConfiguration = $0 { true } else { false } }
        let firstSample = control.firstIndex { if case .videoSample = $0 { true } else { false } }
        let c = try #require(firstConfig), s = try #require(firstSample)
        #expect(c < s)
        let samples = rig.probe.samples
        #expect(samples.first?.isKeyframe == true)
        #expect(samples.filter(\.isKeyframe).count >= 2)   // one per second
        for sample in samples {
            let p = [UInt8](sample.payload)
            let len = Int(p[0]) << 24 | Int(p[1]) << 16 | Int(p[2]) << 8 | Int(p[3])
            #expect(len > 0 && len + 4 <= p.count)
        }
    }

    @Test("captouch tap pauses and resumes; no samples while paused")
    func tap() throws {
        let rig = try Rig()
        rig.start(config())
        rig.run(1)
        rig.glasses.tap()
        rig.run(0.01)
        let countAtPause = rig.probe.samples.count
        rig.run(1)
        #expect(rig.probe.samples.count == countAtPause)
        #expect(rig.probe.streamEvents.last == .paused)
        #expect(rig.probe.sessionEvents == [.started, .paused])
        rig.glasses.tap()
        rig.run(1)
        #expect(rig.probe.sessionEvents == [.started, .paused, .resumed])
        #expect(rig.probe.streamEvents.suffix(2) == [.paused, .streaming(config())])
        #expect(rig.probe.samples.count > countAtPause + 10)
    }

    @Test("fold ends stream and session; unfold does not restart; a new session is refused while folded")
    func fold() throws {
        let rig = try Rig()
        rig.start(config())
        rig.run(0.5)
        rig.glasses.fold()
        rig.run(0.1)
        #expect(rig.probe.states.last?.hingeState == .closed)
        #expect(rig.probe.streamEvents.last == .stopped)
        #expect(rig.probe.sessionEvents.last == .ended(reason: "hinges closed"))
        rig.probe.send(.startSession)
        rig.run(0.1)
        #expect(rig.probe.sessionEvents.last == .ended(reason: "hinges closed"))
        rig.glasses.unfold()
        rig.run(0.1)
        #expect(rig.probe.states.last?.hingeState == .open)
        #expect(!rig.glasses.isSessionActive)
        rig.probe.send(.startSession)
        rig.run(0.1)
        #expect(rig.probe.sessionEvents.last == .started)
    }

    @Test("doff pauses (state doffed), don resumes")
    func donDoff() throws {
        let rig = try Rig()
        rig.start(config())
        rig.run(0.5)
        rig.glasses.doff()
        rig.run(0.1)
        #expect(rig.probe.states.last?.donState == .doffed)
        #expect(rig.probe.streamEvents.last == .paused)
        rig.glasses.don()
        rig.run(0.1)
        #expect(rig.probe.states.last?.donState == .donned)
        #expect(rig.probe.streamEvents.last == .streaming(config()))
    }

    @Test("camera permission denied: answered, and a stream start fails with permissionDenied")
    func permission() throws {
        let rig = try Rig()
        rig.glasses.setPermission(.camera, .denied)
        rig.glasses.setPermissionRequestResult(.camera, .denied)
        rig.start()
        rig.probe.send(.checkPermission(.camera, requestID: 4))
        rig.probe.send(.requestPermission(.camera, requestID: 5))
        rig.probe.send(.startStream(config()))
        rig.run(0.5)
        let answers = rig.probe.messages.compactMap { m -> UInt32? in
            if case .permission(.camera, .denied, let id) = m { return id } else { return nil }
        }
        #expect(answers == [4, 5])
        #expect(rig.probe.faults == [.permissionDenied])
        #expect(rig.probe.streamEvents == [.stopped])
        #expect(rig.probe.samples.isEmpty)
        rig.glasses.setPermissionRequestResult(.camera, .granted)
        rig.probe.send(.requestPermission(.camera, requestID: 6))
        rig.probe.send(.startStream(config()))
        rig.run(0.5)
        #expect(rig.probe.messages.contains(.permission(.camera, .granted, requestID: 6)))
        #expect(!rig.probe.samples.isEmpty)
    }

    @Test("photo capture pauses video, delivers a JPEG, resumes")
    func photo() throws {
        let rig = try Rig(options: .init(photoSize: VideoFrameSize(width: 360, height: 640)))
        rig.start(config())
        rig.run(0.5)
        rig.probe.send(.capturePhoto(.jpeg, requestID: 9))
        rig.run(1)
        let photo = try #require(rig.probe.photos.first)
        #expect(photo.format == .jpeg)
        #expect(photo.data.prefix(2) == Data([0xFF, 0xD8]))
        #expect(photo.data.suffix(2) == Data([0xFF, 0xD9]))
        #expect(rig.probe.streamEvents.suffix(2) == [.paused, .streaming(config())])
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sim-photo-\(getpid()).jpg").path
        try photo.data.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try runFFmpegDecode(path) == 0)
        // HEIC and failures.
        rig.probe.send(.capturePhoto(.heic, requestID: 10))
        rig.glasses.simulateCaptureFailure()
        rig.run(0.1)
        rig.probe.send(.capturePhoto(.jpeg, requestID: 11))
        rig.run(1)
        #expect(rig.probe.faults == [.photoCaptureFailed, .photoCaptureFailed])
        #expect(rig.probe.photos.count == 1)
    }

    @Test("thermal critical ends the stream and session with thermalHot; battery 0 powers off")
    func thermalAndBattery() throws {
        let rig = try Rig()
        rig.start(config())
        rig.run(0.3)
        rig.glasses.setThermalLevel(.moderate)
        rig.glasses.setThermalLevel(.critical)
        rig.run(0.1)
        #expect(rig.probe.states.map(\.thermalLevel).suffix(2) == [.moderate, .critical])
        #expect(rig.probe.faults == [.thermalHot])
        #expect(rig.probe.streamEvents.last == .stopped)
        #expect(rig.probe.sessionEvents.last == .ended(reason: "thermal critical"))
        rig.glasses.setChargingState(.charging)
        rig.glasses.setBatteryLevel(0)
        rig.run(0.1)
        #expect(rig.probe.states.last?.batteryLevel == 0)
        #expect(rig.probe.states.last?.chargingState == .charging)
        #expect(rig.probe.closed != nil)
        #expect(!rig.glasses.isPoweredOn)
    }

    @Test("bandwidth cap: resolution drops first, then frame rate, never below 15 fps")
    func adaptation() throws {
        var core = GlassesCore(info: DeviceInfo(identifier: "x", name: "x"), state: DeviceState())
        _ = core.setBandwidthCap(100_000_000)
        #expect(core.adapted(config(.raw, .high, 30)) == config(.raw, .low, 30))
        _ = core.setBandwidthCap(50_000_000)
        #expect(core.adapted(config(.raw, .high, 30)) == config(.raw, .low, 15))
        _ = core.setBandwidthCap(1_000)
        #expect(core.adapted(config(.raw, .high, 30)) == config(.raw, .low, 15))
        _ = core.setBandwidthCap(1_500_000)
        #expect(core.adapted(config(.hvc1, .high, 30)) == config(.hvc1, .low, 30))
        _ = core.setBandwidthCap(900_000)
        #expect(core.adapted(config(.hvc1, .high, 30)) == config(.hvc1, .low, 24))
        // On a live stream, the glasses report the new configuration.
        let rig = try Rig()
        rig.start(config(.raw, .medium, 15))
        rig.run(0.2)
        rig.glasses.setBandwidthCap(bitsPerSecond: 50_000_000)
        rig.run(0.5)
        #expect(rig.probe.streamEvents.last == .streaming(config(.raw, .low, 15)))
        #expect(rig.probe.samples.last?.payload.count == 360 * 640 * 3 / 2)
    }

    @Test("same seed gives the same streamed bytes")
    func determinism() throws {
        func run() throws -> [Data] {
            let rig = try Rig(profile: SubjectProfile(headMotion: true, seed: 21))
            rig.start(config())
            rig.run(0.5)
            return rig.probe.samples.map(\.payload)
        }
        let a = try run(), b = try run()
        #expect(a.count > 5)
        #expect(a == b)
    }
}

/// Decodes a file with the ffmpeg CLI; returns its exit status (0 = decoded without error).
func runFFmpegDecode(_ path: String, extra: [String] = []) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    process.arguments = ["-v", "error", "-xerror"] + extra + ["-i", path, "-f", "null", "-"]
    let pipe = Pipe()
    process.standardError = pipe
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let errors = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    if !errors.isEmpty { return process.terminationStatus == 0 ? 99 : process.terminationStatus }
    return process.terminationStatus
}
