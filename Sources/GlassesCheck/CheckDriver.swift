import GlassesBridge
import Foundation
import WearablesKit

/// How the runner reaches a device and how it can make the device pause or lose its link.
package struct CheckTarget: Sendable {
    /// Where frames come from (glasses through links; a file is refused).
    package var source: BridgeSource
    /// How time passes: virtual for the in-process simulator in tests, real time otherwise.
    package var clock: BridgeClock
    /// What can drive the device, or a person to ask.
    package var control: CheckDeviceControl
    /// Wall-clock time now (real time: `Date()`; virtual time: a start date plus scheduler time), to align a reference.
    package var wallClock: @Sendable () -> Date

    /// Creates a target; the wall clock is `Date()` in real time and `startDate` plus scheduler time in virtual time.
    package init(source: BridgeSource, clock: BridgeClock, control: CheckDeviceControl = CheckDeviceControl(), startDate: Date = Date()) {
        self.source = source
        self.clock = clock
        self.control = control
        switch clock {
        case .realTime: wallClock = { Date() }
        case .virtual(let scheduler):
            let origin = scheduler.now
            wallClock = { startDate.addingTimeInterval((scheduler.now - origin).inSeconds) }
        }
    }
}

/// What can make the device do the lifecycle steps: the simulator is scripted; on real hardware a person is asked.
package struct CheckDeviceControl: Sendable {
    /// Taps the glasses (pause when streaming, resume when paused); nil when the device cannot be driven.
    package var tap: (@Sendable () -> Void)?
    /// Drops the link; nil when the device cannot be driven.
    package var loseLink: (@Sendable () -> Void)?
    /// Asks the operator to do something and blocks until done; false when declined. nil: nobody to ask.
    package var ask: (@Sendable (String) -> Bool)?

    /// Creates a control; everything nil means every lifecycle step is skipped.
    package init(tap: (@Sendable () -> Void)? = nil, loseLink: (@Sendable () -> Void)? = nil, ask: (@Sendable (String) -> Bool)? = nil) {
        self.tap = tap
        self.loseLink = loseLink
        self.ask = ask
    }
}

/// Waits the way the clock allows: in virtual time by running the scheduler, in real time by polling (bounded).
struct CheckWaiter: Sendable {
    let clock: BridgeClock

    /// Seconds on the scheduler's clock.
    var now: Double { clock.scheduler.now.inSeconds }

    /// Runs (virtual) or waits (real) until `condition` holds or `seconds` pass; returns whether it held. Blocks:
    /// call it off the cooperative pool.
    func wait(seconds: Double, until condition: () -> Bool) -> Bool {
        let limit = max(0, seconds.isFinite ? seconds : 0)
        switch clock {
        case .virtual(let scheduler):
            let deadline = scheduler.now + .milliseconds(Int64(limit * 1000))
            scheduler.schedule(after: .milliseconds(Int64(limit * 1000))) {}
            while !condition() {
                if scheduler.now >= deadline { return condition() }
                guard scheduler.runNext() else { return condition() }
            }
            return true
        case .realTime:
            let deadline = Date().addingTimeInterval(limit)
            while !condition() {
                if Date() >= deadline { return condition() }
                Thread.sleep(forTimeInterval: 0.01)
            }
            return true
        }
    }
}
