import WearablesKit

/// The host end of any link: a ``DeviceLink`` over a ``LinkEndpoint``.
final class HostEndLink: DeviceLink, VideoCreditGating, DeviceDropReporting, LinkDiagnosticsReporting, LinkClockReading {
    let endpoint: LinkEndpoint

    init(endpoint: LinkEndpoint) {
        self.endpoint = endpoint
    }

    func open(eventHandler: @escaping @Sendable (DeviceLinkEvent) -> Void) {
        endpoint.open { event in
            switch event {
            case .message(.device(let message)): eventHandler(.message(message))
            case .closed(let error): eventHandler(.closed(error))
            case .message: break
            }
        }
    }

    func send(_ message: HostMessage) {
        endpoint.send(.host(message))
    }

    func close() {
        endpoint.close()
    }

    func gateVideoCredit(room: @escaping @Sendable () -> Int) {
        endpoint.gateVideoCredit(room: room)
    }

    func videoRoomChanged() {
        endpoint.videoRoomChanged()
    }

    var diagnostics: LinkDiagnostics { endpoint.diagnostics }

    var deviceReportedDrops: UInt64 { endpoint.deviceReportedDrops }

    var linkClockUs: Int64 { endpoint.linkClockUs }
}

/// The device end of any link: a ``HostLink`` over a ``LinkEndpoint``.
final class DeviceEndLink: HostLink, LinkDiagnosticsReporting, LinkClockReading {
    let endpoint: LinkEndpoint

    init(endpoint: LinkEndpoint) {
        self.endpoint = endpoint
    }

    func open(eventHandler: @escaping @Sendable (HostLinkEvent) -> Void) {
        endpoint.open { event in
            switch event {
            case .message(.host(let message)): eventHandler(.message(message))
            case .closed(let error): eventHandler(.closed(error))
            case .message: break
            }
        }
    }

    func send(_ message: DeviceMessage) {
        endpoint.send(.device(message))
    }

    var droppedVideoSamples: UInt64 { endpoint.droppedVideoSamples }

    func close() {
        endpoint.close()
    }

    var diagnostics: LinkDiagnostics { endpoint.diagnostics }

    var linkClockUs: Int64 { endpoint.linkClockUs }
}
