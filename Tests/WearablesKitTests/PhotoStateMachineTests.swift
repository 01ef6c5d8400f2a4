import Foundation
import Testing

@testable import WearablesKit

/// The standalone photo's lifecycle as a plain state machine (DAT 1.0's `Camera.photo` rules), and the transfer's
/// checks against glasses that break them.
@Suite("Standalone photo state machine")
struct PhotoStateMachineTests {
    /// A machine that is started (the glasses answered) and ready.
    static func started() -> PhotoStateMachine {
        var m = PhotoStateMachine(deviceOffersPhoto: true)
        _ = m.deviceReadinessChanged(true)
        #expect(m.start() == [.state(.starting), .send(.startPhoto)])
        #expect(m.deviceReported(.started) == [.state(.started)])
        return m
    }

    static func chunk(_ offset: UInt64, _ count: Int, total: UInt64 = 10, id: UInt32 = 1, metadata: Data? = nil) -> PhotoChunk {
        PhotoChunk(requestID: id, totalBytes: total, offset: offset, bytes: Data(repeating: UInt8(offset), count: count),
                   metadata: metadata)
    }

    @Test("a capture: request, progress after every chunk, the photo with its metadata, the timer cancelled")
    func capture() {
        var m = Self.started()
        #expect(m.capture(resolution: .full, quality: .high) == [.send(.standalonePhoto(.full, .high, requestID: 1)),
                                                                .armTimer(requestID: 1)])
        let meta = Data("{}".utf8)
        #expect(m.chunkArrived(Self.chunk(0, 4, metadata: meta)) == [.progress(PhotoTransferProgress(bytesReceived: 4, totalBytes: 10))])
        let bytes = Data(repeating: 0, count: 4) + Data(repeating: 4, count: 6)
        #expect(m.chunkArrived(Self.chunk(4, 6)) == [.progress(PhotoTransferProgress(bytesReceived: 10, totalBytes: 10)),
                                                     .cancelTimer, .photo(imageData: bytes, metadata: meta)])
        #expect(!m.capturing)
        // The next request gets the next number.
        #expect(m.capture(resolution: .small, quality: .low).first == .send(.standalonePhoto(.small, .low, requestID: 2)))
    }

    @Test("notReady unless started, busy while a capture is under way")
    func notReadyAndBusy() {
        var m = PhotoStateMachine(deviceOffersPhoto: true)
        _ = m.deviceReadinessChanged(true)
        #expect(m.capture(resolution: .medium, quality: .medium) == [.error(.notReady)])
        _ = m.start()
        #expect(m.capture(resolution: .medium, quality: .medium) == [.error(.notReady)])
        _ = m.deviceReported(.started)
        _ = m.capture(resolution: .medium, quality: .medium)
        #expect(m.capture(resolution: .medium, quality: .medium) == [.error(.busy)])
    }

    @Test("stop while starting is recorded and honoured when the start resolves")
    func stopWhileStarting() {
        var m = PhotoStateMachine(deviceOffersPhoto: true)
        _ = m.deviceReadinessChanged(true)
        _ = m.start()
        #expect(m.stop() == [])
        #expect(m.state == .starting)
        #expect(m.deviceReported(.started) == [.state(.started), .state(.stopping), .send(.stopPhoto)])
        #expect(m.deviceReported(.stopped) == [.state(.stopped)])
        // A stopped capability starts again, and this time it stays.
        #expect(m.start() == [.state(.starting), .send(.startPhoto)])
        #expect(m.deviceReported(.started) == [.state(.started)])
    }

    @Test("start: serviceUnavailable from glasses without it, sessionSetupFailed out of reach, the glasses' refusal mapped")
    func startRefusals() {
        var none = PhotoStateMachine(deviceOffersPhoto: false)
        _ = none.deviceReadinessChanged(true)
        #expect(none.start() == [.error(.serviceUnavailable)])
        #expect(none.state == .stopped)
        var away = PhotoStateMachine(deviceOffersPhoto: true)
        guard case .error(.sessionSetupFailed) = away.start().first else { Issue.record("not sessionSetupFailed"); return }
        var denied = PhotoStateMachine(deviceOffersPhoto: true)
        _ = denied.deviceReadinessChanged(true)
        _ = denied.start()
        #expect(denied.deviceReported(.unavailable(.permissionDenied, message: "no")) ==
                [.error(.permissionDenied), .state(.stopping), .state(.stopped)])
    }

    @Test("transfers that break the rules fail the capture; nothing is kept past the limit",
          arguments: [
            ("size over the limit", [chunk(0, 4, total: PhotoStateMachine.maximumPhotoBytes + 1)]),
            ("size changes", [chunk(0, 4), chunk(4, 2, total: 12)]),
            ("out of order", [chunk(0, 4), chunk(6, 2)]),
            ("a gap at the start", [chunk(2, 4)]),
            ("past the size", [chunk(0, 4), chunk(4, 7)]),
            ("metadata later", [chunk(0, 4), chunk(4, 2, metadata: Data([1]))]),
            ("metadata too large", [chunk(0, 4, metadata: Data(count: PhotoStateMachine.maximumMetadataBytes + 1))]),
          ])
    func brokenTransfers(name: String, chunks: [PhotoChunk]) {
        var m = Self.started()
        _ = m.capture(resolution: .medium, quality: .medium)
        var last: [PhotoStateMachine.Action] = []
        for c in chunks { last = m.chunkArrived(c) }
        guard last.count == 2, last[0] == .cancelTimer, case .error(.captureFailure(let why)) = last[1] else {
            Issue.record("\(name): \(last)")
            return
        }
        #expect(why.contains("malformed photo transfer"), "\(name): \(why)")
        #expect(!m.capturing)
        // A chunk after the failure is dropped; the capability can capture again.
        #expect(m.chunkArrived(Self.chunk(0, 1)) == [])
        #expect(m.capture(resolution: .medium, quality: .medium).count == 2)
    }

    @Test("the capture timer, a failure from the glasses, and a late chunk of a failed capture")
    func timeoutAndFailure() {
        var m = Self.started()
        _ = m.capture(resolution: .medium, quality: .medium)
        #expect(m.timedOut(requestID: 2) == [])  // not this capture's timer
        guard case .error(.captureFailure) = m.timedOut(requestID: 1).first else { Issue.record("no timeout"); return }
        #expect(m.chunkArrived(Self.chunk(0, 4)) == [])
        _ = m.capture(resolution: .medium, quality: .medium)
        #expect(m.deviceReported(.captureFailed(requestID: 1, .captureFailure, message: "old")) == [])
        #expect(m.deviceReported(.captureFailed(requestID: 2, .captureFailure, message: "camera busy streaming")) ==
                [.cancelTimer, .error(.captureFailure("camera busy streaming"))])
    }

    @Test("link loss: deviceDisconnected and stopped; camera stop: terminal, a capture under way fails")
    func linkLossAndClose() {
        var m = Self.started()
        _ = m.capture(resolution: .medium, quality: .medium)
        #expect(m.linkLost() == [.cancelTimer, .error(.deviceDisconnected), .state(.stopping), .state(.stopped)])
        var c = Self.started()
        _ = c.capture(resolution: .medium, quality: .medium)
        #expect(c.close(tellGlasses: true) == [.cancelTimer, .error(.captureFailure("the camera stopped")), .send(.stopPhoto),
                                              .state(.stopping), .state(.stopped), .finish])
        #expect(c.start() == [])
        #expect(c.close(tellGlasses: true) == [])
    }
}
