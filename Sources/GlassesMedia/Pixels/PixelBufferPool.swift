import Synchronization

/// A pool of pixel buffer storage: in steady state no frame allocates.
///
/// ``makeBuffer(format:width:height:planes:byteCount:)`` hands out a ``PixelBuffer`` over recycled storage of the
/// right size; the storage comes back to the pool only when the last reference to that buffer goes (through
/// PixelBuffer's release hook), so a consumer may hold a frame as long as it likes and it is never overwritten.
/// Storage of other sizes (after a resolution change) is freed as soon as it returns, and at most
/// `maximumIdleBuffers` idle blocks are kept. The pool may be used from any thread.
public final class PixelBufferPool: Sendable {
    /// Counters for checking the pool's behaviour.
    public struct Statistics: Sendable, Hashable {
        /// Blocks of storage allocated so far.
        public var allocations: Int = 0
        /// Buffers served from recycled storage.
        public var reuses: Int = 0
        /// Buffers handed out and not yet released.
        public var outstanding: Int = 0
        /// Idle blocks waiting in the pool.
        public var idle: Int = 0
    }

    /// A block of storage owned by whoever holds it (the pool while idle, one PixelBuffer while out).
    private struct Block: @unchecked Sendable {
        // @unchecked Sendable: ownership of the block moves wholesale between pool and buffer; never shared.
        let bytes: UnsafeMutableRawBufferPointer
    }

    private struct State {
        var byteCount = 0
        var idle: [Block] = []
        var statistics = Statistics()
    }

    /// Shared with every buffer's release hook, so storage can come home after the pool object is gone.
    private final class Shared: Sendable {
        let state = Mutex(State())
        let maximumIdleBuffers: Int
        init(maximumIdleBuffers: Int) { self.maximumIdleBuffers = maximumIdleBuffers }

        func take(byteCount: Int) -> UnsafeMutableRawBufferPointer {
            let recycled: Block? = state.withLock { state in
                var stale: [Block] = []
                if state.byteCount != byteCount {
                    stale = state.idle
                    state.idle.removeAll()
                    state.byteCount = byteCount
                }
                state.statistics.outstanding += 1
                defer { state.statistics.idle = state.idle.count }
                for block in stale { block.bytes.deallocate() }
                if let block = state.idle.popLast() {
                    state.statistics.reuses += 1
                    return block
                }
                state.statistics.allocations += 1
                return nil
            }
            if let recycled { return recycled.bytes }
            let block = UnsafeMutableRawBufferPointer.allocate(byteCount: max(byteCount, 1), alignment: 64)
            block.initializeMemory(as: UInt8.self, repeating: 0)
            return block
        }

        func give(_ block: UnsafeMutableRawBufferPointer) {
            let keep = state.withLock { state -> Bool in
                state.statistics.outstanding -= 1
                defer { state.statistics.idle = state.idle.count }
                guard block.count == max(state.byteCount, 1), state.idle.count < maximumIdleBuffers else { return false }
                state.idle.append(Block(bytes: block))
                return true
            }
            if !keep { block.deallocate() }
        }

        deinit {
            state.withLock { state in
                for block in state.idle { block.bytes.deallocate() }
                state.idle.removeAll()
            }
        }
    }

    private let shared: Shared

    /// Creates an empty pool.
    /// - Parameter maximumIdleBuffers: how many released blocks to keep for reuse (at least 1).
    public init(maximumIdleBuffers: Int = 8) {
        shared = Shared(maximumIdleBuffers: max(1, maximumIdleBuffers))
    }

    /// The pool's counters now.
    public var statistics: Statistics { shared.state.withLock { $0.statistics } }

    /// A buffer with the given layout over pooled storage of `byteCount` bytes. Its contents are whatever the
    /// previous user left (zero when fresh): the caller fills every plane.
    public func makeBuffer(
        format: PixelFormat, width: Int, height: Int, planes: [PixelPlane], byteCount: Int
    ) -> PixelBuffer {
        let block = shared.take(byteCount: byteCount)
        let shared = self.shared
        return PixelBuffer(
            format: format, width: width, height: height, planes: planes, adopting: block,
            onRelease: { shared.give($0) }
        )
    }

    /// A BGRA buffer whose rows are padded to a multiple of `rowAlignment` bytes.
    public func makeBGRA(width: Int, height: Int, rowAlignment: Int = 64) -> PixelBuffer {
        guard let stride = NV12Layout.align(width, to: rowAlignment, scale: 4) else {
            preconditionFailure("BGRA geometry \(width)x\(height) is not representable")
        }
        return makeBuffer(
            format: .bgra32, width: width, height: height,
            planes: [PixelPlane(width: width, height: height, bytesPerRow: stride, offset: 0)],
            byteCount: stride * height
        )
    }

    /// An NV12 buffer (video or full range) whose rows are padded to a multiple of `rowAlignment` bytes.
    public func makeNV12(width: Int, height: Int, fullRange: Bool, rowAlignment: Int = 64) -> PixelBuffer {
        guard let layout = NV12Layout.aligned(width: width, height: height, rowAlignment: rowAlignment) else {
            preconditionFailure("NV12 geometry \(width)x\(height) is not representable")
        }
        return makeBuffer(
            format: fullRange ? .nv12FullRange : .nv12VideoRange, width: width, height: height,
            planes: layout.planes, byteCount: layout.byteCount
        )
    }
}
