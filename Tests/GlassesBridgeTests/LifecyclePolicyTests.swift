import Testing
@testable import GlassesBridge

/// Drives a ``LifecyclePolicy`` like its owner would: performs schedule actions on a virtual timeline.
private struct PolicyHarness {
    var policy = LifecyclePolicy()
    var now: Duration = .zero
    var timers: [(deadline: Duration, timer: LifecyclePolicy.Timer, generation: UInt64)] = []
    var performed: [LifecyclePolicy.Action] = []

    mutating func take(_ actions: [LifecyclePolicy.Action]) -> [LifecyclePolicy.Action] {
        for action in actions {
            if case .schedule(let timer, let delay, let generation) = action {
                timers.append((now + delay, timer, generation))
            }
        }
        performed += actions
        return actions.filter {
            if case .schedule = $0 { return false }
            if case .notice = $0 { return false }
            return true
        }
    }

    /// Advances virtual time, firing due timers in order; returns the non-timer actions they produced.
    mutating func advance(by duration: Duration, framesEvery interval: Duration? = nil) -> [LifecyclePolicy.Action] {
        let end = now + duration
        var result: [LifecyclePolicy.Action] = []
        var nextFrame = interval.map { now + $0 }
        while true {
            let due = timers.enumerated().filter { $0.element.deadline <= end }.min { $0.element.deadline < $1.element.deadline }
            let frameDue = nextFrame.flatMap { $0 <= end ? $0 : nil }
            if let frameDue, frameDue <= (due?.element.deadline ?? end) {
                now = frameDue
                policy.frameReceived(now: now)
                nextFrame = frameDue + interval!
                continue
            }
            guard let (index, entry) = due else { break }
            timers.remove(at: index)
            now = entry.deadline
            result += take(policy.timerFired(entry.timer, generation: entry.generation, now: now))
        }
        now = end
        return result
    }

    mutating func startStreaming() {
        _ = take(policy.start(now: now))
        _ = take(policy.linkConnected(now: now))
        _ = take(policy.sessionStarted(now: now))
        _ = take(policy.streamStreaming(now: now))
    }
}

@Suite("Lifecycle policy (virtual time)")
struct LifecyclePolicyTests {
    @Test func startupOrderIsConnectSessionCamera() {
        var harness = PolicyHarness()
        #expect(harness.take(harness.policy.start(now: .zero)) == [.connect])
        #expect(harness.policy.phase == .connecting)
        #expect(harness.take(harness.policy.linkConnected(now: .zero)) == [.startSession])
        #expect(harness.take(harness.policy.sessionStarted(now: .zero)) == [.markDiscontinuity, .startCamera])
        #expect(harness.take(harness.policy.streamStreaming(now: .zero)) == [])
        #expect(harness.policy.phase == .streaming)
    }

    @Test func framesKeepTheWatchdogQuiet() {
        var harness = PolicyHarness()
        harness.startStreaming()
        let actions = harness.advance(by: .seconds(60), framesEvery: .milliseconds(41))
        #expect(actions.isEmpty)
        #expect(harness.policy.stallRestarts == 0)
        // The watchdog is still armed while streaming.
        #expect(!harness.timers.isEmpty)
    }

    @Test func aZombieStreamIsRestartedAfterFiveSeconds() {
        var harness = PolicyHarness()
        harness.startStreaming()
        _ = harness.advance(by: .seconds(3), framesEvery: .milliseconds(40))
        // Frames stop; the stream still says streaming.
        let early = harness.advance(by: .milliseconds(4_900))
        #expect(early.isEmpty, "restarted before 5 s of silence")
        let actions = harness.advance(by: .milliseconds(200))
        #expect(actions == [.markDiscontinuity, .restartCamera])
        #expect(harness.policy.phase == .startingStream)
        #expect(harness.policy.stallRestarts == 1)
    }

    @Test func aPausedStreamIsNotRestarted() {
        var harness = PolicyHarness()
        harness.startStreaming()
        _ = harness.take(harness.policy.streamPaused(now: harness.now))
        #expect(harness.advance(by: .seconds(60)).isEmpty)
        #expect(harness.policy.phase == .paused)
        _ = harness.take(harness.policy.streamStreaming(now: harness.now))
        #expect(harness.advance(by: .seconds(4)).isEmpty)
        #expect(harness.advance(by: .seconds(2)) == [.markDiscontinuity, .restartCamera])
    }

    @Test func repeatedStallsEndTheRunWithAnActionableMessage() {
        var harness = PolicyHarness()
        harness.startStreaming()
        var finish: BridgeFailure??
        for _ in 0..<20 {
            for action in harness.advance(by: .seconds(6)) {
                if case .restartCamera = action { _ = harness.take(harness.policy.streamStreaming(now: harness.now)) }
                if case .finish(let failure) = action { finish = failure }
            }
            if finish != nil { break }
        }
        let failure = finish.flatMap { $0 }
        #expect(failure?.kind == .repeatedStalls)
        #expect(failure?.exitCode == .deviceUnavailable)
        #expect(harness.policy.stallRestarts == harness.policy.configuration.maximumConsecutiveStallRestarts)
    }

    @Test func linkLossReconnectsWithBackoffOfAtLeastTwoSeconds() {
        var harness = PolicyHarness()
        harness.startStreaming()
        let lost = harness.take(harness.policy.linkLost("peer closed", now: harness.now))
        // The loss is a warning (shown without --verbose), not a notice.
        #expect(lost == [.closeLink, .warning("link lost: peer closed; reconnecting in 2 s")])
        #expect(harness.policy.phase == .waiting)
        #expect(harness.advance(by: .milliseconds(1_999)).isEmpty, "reconnected sooner than 2 s")
        #expect(harness.advance(by: .milliseconds(1)) == [.connect])
        // The reconnect fails: the next wait doubles.
        _ = harness.take(harness.policy.connectFailed("refused", now: harness.now))
        #expect(harness.advance(by: .milliseconds(3_999)).isEmpty)
        #expect(harness.advance(by: .milliseconds(1)) == [.connect])
        #expect(harness.take(harness.policy.linkConnected(now: harness.now)) == [.startSession])
        #expect(harness.policy.reconnects == 1)
        // Frames reset the backoff.
        _ = harness.take(harness.policy.sessionStarted(now: harness.now))
        _ = harness.take(harness.policy.streamStreaming(now: harness.now))
        harness.policy.frameReceived(now: harness.now)
        #expect(harness.policy.backoff(attempt: 0) == .seconds(2))
        _ = harness.take(harness.policy.linkLost("again", now: harness.now))
        #expect(harness.advance(by: .seconds(2)) == [.connect])
    }

    @Test func aRunThatEndsWhileTheLinkIsStillLostIsAFailure() {
        var harness = PolicyHarness()
        harness.startStreaming()
        _ = harness.take(harness.policy.linkLost("the connection closed", now: harness.now))
        // Two reconnect attempts fail (at 2 s and 6 s after the loss), then the run's duration ends it at 10 s.
        #expect(harness.advance(by: .seconds(2)) == [.connect])
        _ = harness.take(harness.policy.connectFailed("refused", now: harness.now))
        #expect(harness.advance(by: .seconds(4)) == [.connect])
        _ = harness.take(harness.policy.connectFailed("refused", now: harness.now))
        _ = harness.advance(by: .seconds(4))
        let stop = harness.take(harness.policy.stopRequested(now: harness.now))
        guard case .finish(let failure)? = stop.last else {
            Issue.record("no finish: \(stop)")
            return
        }
        #expect(failure?.kind == .deviceLost && failure?.exitCode == .deviceUnavailable)
        #expect(failure?.message.hasPrefix("Lost the glasses 10 s before the run ended (the connection closed), and they had "
                                           + "not come back (2 reconnect attempts).") == true, "\(String(describing: failure))")
        // A link that came back before the end is a normal end.
        var back = PolicyHarness()
        back.startStreaming()
        _ = back.take(back.policy.linkLost("the connection closed", now: back.now))
        #expect(back.advance(by: .seconds(2)) == [.connect])
        _ = back.take(back.policy.linkConnected(now: back.now))
        #expect(back.take(back.policy.stopRequested(now: back.now)) == [.finish(nil)])
    }

    @Test func aDialledHostWaitsForTheDeviceAgainAtOnceButNewSessionsStillBackOff() {
        var configuration = LifecyclePolicy.Configuration()
        configuration.reconnectWaitsForDevice = true
        var harness = PolicyHarness(policy: LifecyclePolicy(configuration: configuration))
        harness.startStreaming()
        #expect(harness.take(harness.policy.linkLost("relay gone", now: harness.now))
                    == [.closeLink, .warning("link lost: relay gone; reconnecting: waiting for the glasses to dial again")])
        // No backoff: the connect action is the wait for the relay to dial.
        #expect(harness.advance(by: .zero) == [.connect])
        _ = harness.take(harness.policy.connectFailed("no relay dialled in 60 s", now: harness.now))
        #expect(harness.advance(by: .zero) == [.connect])
        // Ended while no relay has dialled in again: lost, in a listener's words.
        var lost = harness
        let stop = lost.take(lost.policy.stopRequested(now: lost.now + .seconds(3)))
        #expect(stop.last == .finish(BridgeFailure(.deviceLost, "Lost the glasses 3 s before the run ended (relay gone), and no relay "
                                                   + "had dialled in again. Check that they are on, unfolded and in range, and that "
                                                   + "the relay is still running.")), "\(stop)")
        #expect(harness.take(harness.policy.linkConnected(now: harness.now)) == [.startSession])
        // A session the device ended still waits at least 2 s (DAT's spacing).
        _ = harness.take(harness.policy.sessionStarted(now: harness.now))
        _ = harness.take(harness.policy.streamStreaming(now: harness.now))
        harness.policy.frameReceived(now: harness.now)
        _ = harness.take(harness.policy.sessionEnded(reason: "folded", now: harness.now))
        #expect(harness.advance(by: .milliseconds(1_999)).isEmpty)
        #expect(harness.advance(by: .milliseconds(1)).contains(.startSession))
    }

    @Test func backoffDoublesAndIsCapped() {
        let policy = LifecyclePolicy()
        #expect((0..<8).map { policy.backoff(attempt: $0) } == [2, 4, 8, 16, 30, 30, 30, 30].map { .seconds($0) })
        var configuration = LifecyclePolicy.Configuration()
        configuration.minimumBackoff = .milliseconds(100)
        #expect(LifecyclePolicy(configuration: configuration).backoff(attempt: 0) == .seconds(2))
    }

    @Test func theFirstConnectionFailingIsDeviceUnavailable() {
        var harness = PolicyHarness()
        _ = harness.take(harness.policy.start(now: .zero))
        let actions = harness.take(harness.policy.connectFailed("no such socket", now: .zero))
        #expect(actions == [.finish(BridgeFailure(.deviceUnavailable, "no such socket"))])
    }

    @Test("a link that ends before hello fails a dial, but a listener waits for the relay's next dial")
    func aLinkEndingBeforeHello() {
        var dialling = PolicyHarness()
        _ = dialling.take(dialling.policy.start(now: .zero))
        #expect(dialling.take(dialling.policy.linkFailedBeforeHello("pairing failed", now: .zero))
                    == [.finish(BridgeFailure(.deviceUnavailable, "pairing failed"))])
        var configuration = LifecyclePolicy.Configuration()
        configuration.reconnectWaitsForDevice = true
        var listening = PolicyHarness(policy: LifecyclePolicy(configuration: configuration))
        _ = listening.take(listening.policy.start(now: .zero))
        let actions = listening.take(listening.policy.linkFailedBeforeHello("the glasses did not introduce themselves within 10 s", now: .zero))
        #expect(actions.first == .warning("a relay dialled in but its link ended before the glasses said hello: the glasses did not introduce themselves within 10 s"),
                "\(actions)")
        #expect(!actions.contains { if case .finish = $0 { true } else { false } }, "\(actions)")
        #expect(listening.advance(by: .zero) == [.connect])
        // The next relay is served as the first would have been.
        #expect(listening.take(listening.policy.linkConnected(now: listening.now)) == [.startSession])
    }

    @Test func aSessionEndedByTheDeviceIsReplacedNoSoonerThanTwoSeconds() {
        var harness = PolicyHarness()
        harness.startStreaming()
        let ended = harness.take(harness.policy.sessionEnded(reason: "Session ended by device", now: harness.now))
        #expect(ended == [.markDiscontinuity])
        #expect(harness.advance(by: .milliseconds(1_900)).isEmpty)
        #expect(harness.advance(by: .milliseconds(100)) == [.startSession])
        // Folded: the new session fails, retried later with a longer wait.
        _ = harness.take(harness.policy.sessionFailed("hinges closed", now: harness.now))
        #expect(harness.advance(by: .milliseconds(3_900)).isEmpty)
        #expect(harness.advance(by: .milliseconds(100)) == [.startSession])
        #expect(harness.take(harness.policy.sessionStarted(now: harness.now)) == [.markDiscontinuity, .startCamera])
        #expect(harness.policy.sessionRestarts == 1)
    }

    @Test(arguments: [
        (LifecyclePolicy.StreamFault.thermal, BridgeFailure.Kind.thermal, "cool"),
        (.battery, .battery, "charging case"),
        (.permissionDenied, .permissionDenied, "Grant camera access"),
    ])
    func deviceConditionsStopCleanly(fault: LifecyclePolicy.StreamFault, kind: BridgeFailure.Kind, advice: String) {
        var harness = PolicyHarness()
        harness.startStreaming()
        let actions = harness.take(harness.policy.streamError(fault, message: "from device", now: harness.now))
        guard case .finish(let failure?) = actions.first else {
            Issue.record("expected finish, got \(actions)")
            return
        }
        #expect(failure.kind == kind)
        #expect(failure.message.contains(advice))
        #expect(failure.exitCode == .deviceUnavailable)
        #expect(harness.policy.phase == .finished)
        // Nothing happens after the end; stale timers are ignored.
        #expect(harness.advance(by: .seconds(30)).isEmpty)
        #expect(harness.take(harness.policy.linkLost("late", now: harness.now)).isEmpty)
    }

    @Test func aStreamErrorRestartsTheCameraAfterABackoff() {
        var harness = PolicyHarness()
        harness.startStreaming()
        #expect(harness.take(harness.policy.streamError(.streamFailure, message: "x", now: harness.now)).isEmpty)
        #expect(harness.advance(by: .seconds(2)) == [.markDiscontinuity, .restartCamera])
        // A photo failure is only a notice.
        _ = harness.take(harness.policy.streamStreaming(now: harness.now))
        let photo = harness.policy.streamError(.photoCaptureFailed, message: "busy", now: harness.now)
        #expect(photo.count == 1)
        #expect(harness.policy.phase == .streaming)
    }

    @Test("a camera that could not start while the session was paused restarts when the session resumes, not a backoff later")
    func aResumedSessionRestartsAWaitingCameraAtOnce() {
        var harness = PolicyHarness()
        harness.startStreaming()
        // The glasses drop off the relay: a stream error, then the camera restart 2 s later fails (session paused).
        _ = harness.take(harness.policy.streamError(.streamFailure, message: "not connected", now: harness.now))
        #expect(harness.advance(by: .seconds(2)) == [.markDiscontinuity, .restartCamera])
        #expect(harness.take(harness.policy.cameraFailed("the session is not started", now: harness.now)).isEmpty)
        #expect(harness.policy.phase == .waiting)
        // The glasses are back 50 ms later and the session resumes: the camera restarts now.
        _ = harness.advance(by: .milliseconds(50))
        #expect(harness.take(harness.policy.sessionStarted(now: harness.now)) == [.markDiscontinuity, .restartCamera])
        #expect(harness.policy.phase == .startingStream)
        // The backoff's timer is void, and a resume with nothing pending does nothing.
        _ = harness.take(harness.policy.streamStreaming(now: harness.now))
        #expect(harness.advance(by: .seconds(5), framesEvery: .milliseconds(40)).isEmpty)
        #expect(harness.take(harness.policy.sessionStarted(now: harness.now)).isEmpty)
        #expect(harness.policy.phase == .streaming)
    }

    @Test func stopEndsTheRunNormallyOnce() {
        var harness = PolicyHarness()
        harness.startStreaming()
        #expect(harness.take(harness.policy.stopRequested(now: harness.now)) == [.finish(nil)])
        #expect(harness.take(harness.policy.stopRequested(now: harness.now)).isEmpty)
        #expect(harness.policy.outcome == nil)
    }

    @Test func staleTimersAreIgnored() {
        var harness = PolicyHarness()
        harness.startStreaming()
        _ = harness.take(harness.policy.streamPaused(now: harness.now))
        _ = harness.take(harness.policy.streamStreaming(now: harness.now))
        harness.policy.frameReceived(now: harness.now)
        // Two watchdog timers are pending; only the current generation counts.
        #expect(harness.timers.filter { $0.timer == .watchdog }.count == 2)
        let actions = harness.advance(by: .seconds(5))
        #expect(actions == [.markDiscontinuity, .restartCamera])
        #expect(harness.policy.stallRestarts == 1)
    }

    @Test func aStreamStuckInStartingIsAbandonedAndRestartedWithItsReason() {
        var harness = PolicyHarness()
        _ = harness.take(harness.policy.start(now: harness.now))
        _ = harness.take(harness.policy.linkConnected(now: harness.now))
        #expect(harness.take(harness.policy.sessionStarted(now: harness.now)) == [.markDiscontinuity, .startCamera])
        // The camera was started; `.streaming` never comes (the start was lost on its way to the glasses).
        #expect(harness.advance(by: .milliseconds(9_900)).isEmpty, "abandoned before the start timeout")
        #expect(harness.policy.phase == .startingStream)
        let noticesBefore = harness.performed.count
        #expect(harness.advance(by: .milliseconds(200)) == [.markDiscontinuity, .restartCamera])
        #expect(harness.policy.phase == .startingStream)
        #expect(harness.policy.streamStartTimeouts == 1)
        #expect(harness.policy.lastCameraRestart == .streamStartTimedOut)
        #expect(harness.policy.stallRestarts == 0, "a start that timed out is not a stall")
        let notices = harness.performed[noticesBefore...].compactMap { if case .notice(let text) = $0 { text } else { nil } }
        #expect(notices.contains { $0.contains("streamStartTimedOut") }, "\(notices)")
        // The restarted camera streams: nothing more is restarted, by the start timer or the watchdog.
        _ = harness.take(harness.policy.streamStreaming(now: harness.now))
        #expect(harness.advance(by: .seconds(30), framesEvery: .milliseconds(41)).isEmpty)
        #expect(harness.policy.streamStartTimeouts == 1)
    }

    @Test func aStreamThatStartsInTimeIsNotAbandoned() {
        var harness = PolicyHarness()
        _ = harness.take(harness.policy.start(now: harness.now))
        _ = harness.take(harness.policy.linkConnected(now: harness.now))
        _ = harness.take(harness.policy.sessionStarted(now: harness.now))
        _ = harness.advance(by: .seconds(9))
        _ = harness.take(harness.policy.streamStreaming(now: harness.now))
        #expect(harness.advance(by: .seconds(20), framesEvery: .milliseconds(41)).isEmpty)
        // Paused while starting (a tap): waiting for the wearer is not a failed start either.
        _ = harness.take(harness.policy.streamPaused(now: harness.now))
        #expect(harness.advance(by: .seconds(60)).isEmpty)
        #expect(harness.policy.streamStartTimeouts == 0)
    }

    @Test func startsThatKeepTimingOutEndTheRunLikeRepeatedStalls() {
        var harness = PolicyHarness()
        _ = harness.take(harness.policy.start(now: harness.now))
        _ = harness.take(harness.policy.linkConnected(now: harness.now))
        _ = harness.take(harness.policy.sessionStarted(now: harness.now))
        var finish: BridgeFailure??
        for _ in 0..<20 where finish == nil {
            for action in harness.advance(by: .seconds(11)) {
                if case .finish(let failure) = action { finish = failure }
            }
        }
        let limit = harness.policy.configuration.maximumConsecutiveStallRestarts
        #expect(finish.flatMap { $0 }?.kind == .repeatedStalls)
        #expect(harness.policy.streamStartTimeouts == limit)
        #expect(harness.policy.phase == .finished)
    }
}
