import Synchronization

/// The entry point: the process-wide instance, configured once, and independent instances on demand.
public enum Wearables {
    private static let slot = ConfigurationSlot()

    /// Configures the process-wide instance; call once, before the first use of ``shared``.
    /// - Throws: ``WearablesError/alreadyConfigured`` on a second call (or after ``shared`` was used).
    public static func configure(_ configuration: WearablesConfiguration = .standard()) throws(WearablesError) {
        try slot.configure(configuration)
    }

    /// The process-wide instance (configured with defaults on first use if ``configure(_:)`` was not called).
    public static var shared: any WearablesInterface { slot.instance }

    /// The process-wide instance as its concrete type.
    public static var sharedInstance: WearablesInstance { slot.instance }

    /// Makes an independent instance with its own devices, sessions and timers.
    ///
    /// Use one per test (with a ``ManualScheduler``) or per pipeline; instances share no state.
    public static func makeInstance(configuration: WearablesConfiguration = .standard()) -> WearablesInstance {
        WearablesInstance(configuration: configuration)
    }
}

/// Holds the process-wide instance: configured once, created lazily.
final class ConfigurationSlot: Sendable {
    private let state = Mutex<WearablesInstance?>(nil)

    init() {}

    func configure(_ configuration: WearablesConfiguration) throws(WearablesError) {
        let created = state.withLock { current -> Bool in
            guard current == nil else { return false }
            current = WearablesInstance(configuration: configuration)
            return true
        }
        if !created { throw .alreadyConfigured }
    }

    var instance: WearablesInstance {
        state.withLock { current in
            if let current { return current }
            let made = WearablesInstance(configuration: .standard())
            current = made
            return made
        }
    }
}
