import WearablesKit

/// The host end of any link: a ``DeviceLink`` over a ``LinkEndpoint``.
package final class HostEndLink: DeviceLink, VideoCreditGating, DeviceDropReporting, LinkDiagnosticsReporting, LinkClockReading {
    package let endpoint: LinkEndpoint

    package init(endpoint: LinkEndpoint) {
        self.endpoint = endpoint
    }

    package func open(eventHandler: @escaping @Sendable (DeviceLinkEvent) -> Void) {
        endpoint.open { event in
            switch event {
            case .message(.device(let message)): eventHandler(.message(message))
            case .closed(let error): eventHandler(.closed(error))
            case .message: break
            }
        }
    }

    package func send(_ message: HostMessage) {
        endpoint.send(.host(message))
    }

    package func close() {
        endpoint.close()
    }

    package func gateVideoCredit(room: @escaping @Sendable () -> Int) {
        endpoint.gateVideoCredit(room: room)
    }

    package func videoRoomChanged() {
        endpoint.videoRoomChanged()
    }

    package var diagnostics: LinkDiagnostics { endpoint.diagnostics }

    package var deviceReportedDrops: UInt64 { endpoint.deviceReportedDrops }

    package var linkClockUs: Int64 { endpoint.linkClockUs }
}

/// The device end of any link: a ``HostLink`` over a ``LinkEndpoint``.
package final class DeviceEndLink: HostLink, LinkDiagnosticsReporting, LinkClockReading, RawByteTransmitting {
    package let endpoint: LinkEndpoint

    package init(endpoint: LinkEndpoint) {
        self.endpoint = endpoint
    }

    package func open(eventHandler: @escaping @Sendable (HostLinkEvent) -> Void) {
        endpoint.open { event in
            switch event {
            case .message(.host(let message)): eventHandler(.message(message))
            case .closed(let error): eventHandler(.closed(error))
            case .message: break
            }
        }
    }

    package func send(_ message: DeviceMessage) {
        endpoint.send(.device(message))
    }

    package var droppedVideoSamples: UInt64 { endpoint.droppedVideoSamples }

    package func close() {
        endpoint.close()
    }

    package var diagnostics: LinkDiagnostics { endpoint.diagnostics }

    package var linkClockUs: Int64 { endpoint.linkClockUs }

    package func transmitRaw(_ bytes: [UInt8]) -> Bool { endpoint.transmitRaw(bytes) }

    package func abort(_ error: LinkError) { endpoint.fail(error, notifyPeer: false) }
}
