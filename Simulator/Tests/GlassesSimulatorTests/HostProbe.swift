import Foundation
import GlassesLink
import Synchronization
import WearablesKit
@testable import GlassesSimulator

/// A bare host for tests: speaks the link protocol by hand and records what the glasses send.
final class HostProbe: Sendable {
    let link: any DeviceLink
    private let received = Mutex<[DeviceMessage]>([])
    private let closedWith = Mutex<LinkError?>(nil)

    init(link: any DeviceLink) {
        self.link = link
        link.open { [weak self] event in self?.record(event) }
    }

    private func record(_ event: DeviceLinkEvent) {
        switch event {
        case .message(let m): received.withLock { $0.append(m) }
        case .closed(let e): closedWith.withLock { $0 = e }
        }
    }

    func send(_ m: HostMessage) { link.send(m) }
    var messages: [DeviceMessage] { received.withLock { $0 } }
    var closed: LinkError? { closedWith.withLock { $0 } }
    func clear() { received.withLock { $0.removeAll() } }

    var samples: [VideoSample] {
        messages.compactMap { if case .videoSample(let s) = $0 { return s } else { return nil } }
    }
    var streamEvents: [DeviceStreamEvent] {
        messages.compactMap { if case .stream(let e, _) = $0 { return e } else { return nil } }
    }
    var sessionEvents: [DeviceSessionEvent] {
        messages.compactMap { if case .session(let e) = $0 { return e } else { return nil } }
    }
    var faults: [DeviceStreamFault] {
        messages.compactMap { if case .fault(let f, _) = $0 { return f } else { return nil } }
    }
    var states: [DeviceState] {
        messages.compactMap { if case .deviceState(let s) = $0 { return s } else { return nil } }
    }
    var photos: [PhotoData] {
        messages.compactMap { if case .photo(let p, _) = $0 { return p } else { return nil } }
    }
    /// Messages other than video samples and heartbeats, in order (for checking sequences).
    var controlMessages: [DeviceMessage] {
        messages.filter {
            switch $0 {
            case .videoSample, .heartbeat: false
            default: true
            }
        }
    }
}

/// Glasses joined to a probe through an in-process link on a manual scheduler.
struct Rig {
    let scheduler = ManualScheduler()
    let glasses: SimulatedGlasses
    let probe: HostProbe
    let link: InProcessLink

    init(profile: SubjectProfile = SubjectProfile(seed: 7), options: SimulatedGlasses.Options = .init()) throws {
        glasses = try SimulatedGlasses(profile: profile, scheduler: scheduler, options: options)
        link = InProcessLink(scheduler: scheduler, initialCredit: 8, liveness: .disabled)
        glasses.attach(link.device)
        probe = HostProbe(link: link.host)
    }

    /// Hello + session (+ stream when given), then settle.
    func start(_ configuration: StreamConfiguration? = nil) {
        probe.send(.hello(protocolVersion: linkProtocolVersion, pairingToken: nil))
        probe.send(.startSession)
        if let configuration { probe.send(.startStream(configuration)) }
        scheduler.advance(by: .milliseconds(1))
    }

    func run(_ seconds: Double) { scheduler.advance(by: .milliseconds(Int64(seconds * 1000))) }
}

func config(_ codec: VideoCodec = .raw, _ resolution: StreamingResolution = .low, _ fps: UInt = 15) -> StreamConfiguration {
    try! StreamConfiguration.validated(videoCodec: codec, resolution: resolution, frameRate: fps)
}
