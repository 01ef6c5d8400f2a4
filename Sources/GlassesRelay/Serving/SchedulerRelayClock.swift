import GlassesMedia
import WearablesKit

/// A ``RelayClock`` on a WearablesKit ``EventScheduler``: real time with a `DispatchEventScheduler`, virtual time
/// with a `ManualScheduler` (tests), on the same time line as the DAT instance it relays.
public struct SchedulerRelayClock: RelayClock {
    private let scheduler: any EventScheduler

    /// Creates a clock on `scheduler`.
    public init(_ scheduler: any EventScheduler) {
        self.scheduler = scheduler
    }

    /// The scheduler's time in microseconds.
    public var nowUs: Int64 { scheduler.now.wholeMicroseconds }

    /// Schedules `action` on the scheduler.
    public func schedule(afterUs delayUs: Int64, _ action: @escaping @Sendable () -> Void) {
        scheduler.schedule(after: .microseconds(delayUs), action)
    }
}
