import Synchronization

/// Counts the copies of frame bytes made along a frame's path, where they are made, so `Scripts/bench` can print
/// copies per frame as counted rather than estimated.
///
/// Each place that copies a frame's bytes records the copy with its stage and size; counting costs one relaxed
/// atomic add per copy and no lock. The counters are process-wide and only ever grow; take two ``snapshot()``s and
/// subtract.
public enum FrameCopyCounter {
    /// Where along the path a copy happens.
    public enum Stage: Int, Sendable, CaseIterable, CustomStringConvertible {
        /// Bytes read from a socket into the link's receive buffer (counted in bytes; a frame spans many reads).
        case socketRead
        /// A link frame's body gathered into its own storage (one per frame; message blobs are views of it).
        case linkBody
        /// A picture converted or repacked into a new pixel buffer (decoder output, or raw frames in another
        /// layout; a raw `420v` frame is a view and is not counted).
        case conversion
        /// Custom input's own copy of an accepted frame, through the frame transform.
        case customInputCopy

        /// The stage's name.
        public var description: String {
            switch self {
            case .socketRead: "socket read"
            case .linkBody: "link frame body"
            case .conversion: "pixel conversion"
            case .customInputCopy: "custom input copy"
            }
        }
    }

    /// The counts of one stage.
    public struct Count: Sendable, Hashable {
        /// Copy operations.
        public var copies: UInt64
        /// Bytes copied.
        public var bytes: UInt64

        /// Creates a count.
        public init(copies: UInt64, bytes: UInt64) {
            self.copies = copies
            self.bytes = bytes
        }

        /// The copies and bytes since `earlier`.
        public func since(_ earlier: Count) -> Count {
            Count(copies: copies &- earlier.copies, bytes: bytes &- earlier.bytes)
        }
    }

    private static let socketReadCopies = Atomic<UInt64>(0)
    private static let socketReadBytes = Atomic<UInt64>(0)
    private static let linkBodyCopies = Atomic<UInt64>(0)
    private static let linkBodyBytes = Atomic<UInt64>(0)
    private static let conversionCopies = Atomic<UInt64>(0)
    private static let conversionBytes = Atomic<UInt64>(0)
    private static let customInputCopies = Atomic<UInt64>(0)
    private static let customInputBytes = Atomic<UInt64>(0)

    /// Records one copy of `bytes` bytes at `stage`.
    public static func record(_ stage: Stage, bytes count: Int) {
        let size = UInt64(max(0, count))
        switch stage {
        case .socketRead:
            socketReadCopies.add(1, ordering: .relaxed)
            socketReadBytes.add(size, ordering: .relaxed)
        case .linkBody:
            linkBodyCopies.add(1, ordering: .relaxed)
            linkBodyBytes.add(size, ordering: .relaxed)
        case .conversion:
            conversionCopies.add(1, ordering: .relaxed)
            conversionBytes.add(size, ordering: .relaxed)
        case .customInputCopy:
            customInputCopies.add(1, ordering: .relaxed)
            customInputBytes.add(size, ordering: .relaxed)
        }
    }

    /// The counts so far, per stage.
    public static func snapshot() -> [Stage: Count] {
        [
            .socketRead: Count(
                copies: socketReadCopies.load(ordering: .relaxed), bytes: socketReadBytes.load(ordering: .relaxed)),
            .linkBody: Count(
                copies: linkBodyCopies.load(ordering: .relaxed), bytes: linkBodyBytes.load(ordering: .relaxed)),
            .conversion: Count(
                copies: conversionCopies.load(ordering: .relaxed), bytes: conversionBytes.load(ordering: .relaxed)),
            .customInputCopy: Count(
                copies: customInputCopies.load(ordering: .relaxed), bytes: customInputBytes.load(ordering: .relaxed)),
        ]
    }
}
