import Foundation
import Synchronization
import WearablesKit

/// One thing that happens to the glasses at a scenario time.
public enum ScenarioAction: Sendable, Hashable {
    case powerOn, powerOff, don, doff, fold, unfold, tap
    case battery(Int?)
    case charging(ChargingState)
    case thermal(ThermalLevel)
    case permission(Permission, PermissionStatus)
    case permissionRequestResult(Permission, PermissionStatus)
    case bandwidthCap(Int?)
    case captureFailure
    case pulseRate(Double)
    case breathingRate(Double)
    case fault(SimulatedFault)
}

/// A timed event of a scenario.
public struct ScenarioEvent: Sendable, Hashable {
    /// Seconds after the scenario starts.
    public var at: Double
    /// What happens.
    public var action: ScenarioAction

    /// Creates an event.
    public init(at: Double, action: ScenarioAction) {
        self.at = at
        self.action = action
    }
}

/// A script of timed events and faults for the simulated glasses (see `docs/SCENARIOS.md` for the JSON format).
public struct Scenario: Sendable, Hashable {
    /// A name for logs.
    public var name: String
    /// The simulated person (and the seed for everything random).
    public var subject: SubjectProfile
    /// How long the scenario runs, in seconds (nil: until stopped).
    public var duration: Double?
    /// The events, sorted by time (stable for equal times).
    public var events: [ScenarioEvent]
    /// How far the glasses' IMU clock runs ahead of their video clock, in seconds (negative: behind; default 0): the
    /// glasses are made with it (``SimulatedGlasses/Options/motionClockOffset``, ``glassesOptions``).
    public var imuClockOffset: Double = 0
    /// The largest ``imuClockOffset`` a scenario file may set, in milliseconds.
    public static let maxIMUClockOffsetMs = 10_000.0

    /// Options for glasses that play this scenario: the defaults with its IMU clock offset.
    public var glassesOptions: SimulatedGlasses.Options {
        SimulatedGlasses.Options(motionClockOffset: .nanoseconds(Int64((imuClockOffset * 1e9).rounded())))
    }

    /// Creates a scenario.
    public init(name: String = "scenario", subject: SubjectProfile = SubjectProfile(), duration: Double? = nil,
                events: [ScenarioEvent] = []) {
        self.name = name
        self.subject = subject
        self.duration = duration
        self.events = events.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
    }
}

extension SimulatedGlasses {
    /// Performs one scenario action now.
    /// - Throws: ``SimulatorError`` `faultUnavailable` when the action is a fault these glasses cannot inject on
    ///   their link (see ``inject(_:)``).
    public func perform(_ action: ScenarioAction) throws(SimulatorError) {
        switch action {
        case .powerOn: powerOn()
        case .powerOff: powerOff()
        case .don: don()
        case .doff: doff()
        case .fold: fold()
        case .unfold: unfold()
        case .tap: tap()
        case .battery(let level): setBatteryLevel(level)
        case .charging(let state): setChargingState(state)
        case .thermal(let level): setThermalLevel(level)
        case .permission(let p, let s): setPermission(p, s)
        case .permissionRequestResult(let p, let s): setPermissionRequestResult(p, s)
        case .bandwidthCap(let cap): setBandwidthCap(bitsPerSecond: cap)
        case .captureFailure: simulateCaptureFailure()
        case .pulseRate(let bpm): setPulseRate(bpm)
        case .breathingRate(let brpm): setBreathingRate(brpm)
        case .fault(let fault): try tryInject(fault)
        }
    }

    /// Runs `scenario` from now on the glasses' scheduler, after checking that every fault in it can be injected on
    /// the glasses' link as it is now (garbage bytes need a raw-byte writer, see ``setGarbageWriter(_:)``).
    /// - Returns: a handle that cancels the events not yet run.
    /// - Throws: ``SimulatorError`` `faultUnavailable` naming the first event that cannot be performed; nothing is
    ///   scheduled then.
    @discardableResult
    public func start(_ scenario: Scenario) throws(SimulatorError) -> ScheduledAction {
        if let index = scenario.events.firstIndex(where: { if case .fault(.garbageBytes) = $0.action { true } else { false } }),
           !hasGarbageWriter
        {
            throw SimulatorError(
                .faultUnavailable,
                "event \(index) ('garbage' at \(scenario.events[index].at) s) cannot be played here: it writes bytes onto a socket between frames, and these glasses are not served on one (glasses-sim --listen serves them so)",
                context: ["event": "\(index)", "fault": "garbage"])
        }
        return ScenarioRunner.start(scenario, on: self)
    }

    /// Schedules every event of `scenario` relative to now on the glasses' scheduler.
    ///
    /// Events are scheduled one instant at a time (only the next one is ever pending), so a scenario of 100 000
    /// events costs no more per frame than one of ten. An event that fails (a fault the link cannot carry, an event
    /// time outside 0...``Scenario/maxEventTime``) is reported to the failure handler (``setFailureHandler(_:)``)
    /// and counted in ``GlassesStatistics/failedEvents``; ``start(_:)`` checks up front instead.
    /// - Returns: one handle that cancels the events not yet run.
    @discardableResult
    public func run(_ scenario: Scenario) -> [ScheduledAction] {
        [ScenarioRunner.start(scenario, on: self)]
    }
}

/// Plays a scenario's events at their times, keeping only the next one scheduled.
final class ScenarioRunner: Sendable {
    private struct State {
        var next = 0
        var pending: ScheduledAction?
        var cancelled = false
    }

    private let events: [ScenarioEvent]
    private let start: Duration
    // Only the glasses, weakly: the scheduler holds the runner's next wake-up, so a strong reference to the
    // scheduler (or to glasses that hold it) would be a cycle for as long as events are pending.
    private weak let glasses: SimulatedGlasses?
    private let state = Mutex(State())

    private init(events: [ScenarioEvent], start: Duration, glasses: SimulatedGlasses) {
        self.events = events
        self.start = start
        self.glasses = glasses
    }

    /// Starts playing `scenario` on `glasses` from now.
    static func start(_ scenario: Scenario, on glasses: SimulatedGlasses) -> ScheduledAction {
        let runner = ScenarioRunner(events: scenario.events, start: glasses.scheduler.now, glasses: glasses)
        runner.scheduleNext()
        return ScheduledAction { [weak runner] in runner?.cancel() }
    }

    /// The scheduler time of an event, or nil for a time outside 0...maxEventTime (checked before converting).
    static func offset(of event: ScenarioEvent) -> Duration? {
        guard event.at.isFinite, event.at >= 0, event.at <= Scenario.maxEventTime else { return nil }
        return .microseconds(Int64((event.at * 1_000_000).rounded()))
    }

    private func cancel() {
        let pending = state.withLock { s -> ScheduledAction? in
            s.cancelled = true
            defer { s.pending = nil }
            return s.pending
        }
        pending?.cancel()
    }

    /// Schedules a wake-up for the next event (the runner stays alive through the scheduler until the last one).
    private func scheduleNext() {
        let index = state.withLock { $0.cancelled ? nil : $0.next }
        guard let index, index < events.count, let scheduler = glasses?.scheduler else { return }
        let due = Self.offset(of: events[index]).map { start + $0 } ?? scheduler.now
        let action = scheduler.schedule(after: due - scheduler.now) { [self] in fire() }
        state.withLock { $0.pending = action }
    }

    /// Performs every event due now, in order, then schedules the next.
    private func fire() {
        guard let glasses else { return }
        let now = glasses.scheduler.now
        while true {
            let event: ScenarioEvent? = state.withLock { s in
                guard !s.cancelled, s.next < events.count else { return nil }
                let candidate = events[s.next]
                if let offset = Self.offset(of: candidate), start + offset > now { return nil }
                s.next += 1
                return candidate
            }
            guard let event else { break }
            guard Self.offset(of: event) != nil else {
                glasses.reportFailure(SimulatorError(
                    .invalidScenario,
                    "a scenario event at \(event.at) s was skipped: event times must lie in 0...\(Int(Scenario.maxEventTime)) seconds",
                    context: ["field": "at", "value": "\(event.at)", "allowed": "0...\(Int(Scenario.maxEventTime))"]))
                continue
            }
            do { try glasses.perform(event.action) } catch { glasses.reportFailure(error) }
        }
        scheduleNext()
    }
}
