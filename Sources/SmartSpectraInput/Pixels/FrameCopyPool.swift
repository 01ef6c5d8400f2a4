import Synchronization

/// Recycles the storage of the SDK's frame copies, so that steady streaming does not allocate per frame.
///
/// Buffers it hands out return their storage here when their last reference goes (the backend, the queue or
/// `imageOutput` may hold them for a while). Only buffers of the most recent size are kept, at most `limit` of them.
final class FrameCopyPool: Sendable {
    /// Storage that sits unused in the cache.
    private struct FreeStorage: @unchecked Sendable {
        // @unchecked Sendable: the cache owns the memory exclusively while it is free; it moves to exactly one buffer.
        let buffer: UnsafeMutableRawBufferPointer
    }

    private struct Cache {
        var byteCount = 0
        var free: [FreeStorage] = []
    }

    private let cache = Mutex(Cache())
    private let limit: Int

    /// Creates a pool keeping at most `limit` free buffers.
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    deinit {
        cache.withLock { cache in
            for storage in cache.free { storage.buffer.deallocate() }
            cache.free.removeAll()
        }
    }

    /// A buffer with the given layout, on recycled storage when possible (contents undefined; callers overwrite).
    func makeBuffer(format: PixelFormat, width: Int, height: Int, planes: [PixelPlane], byteCount: Int) -> PixelBuffer {
        let size = max(byteCount, 1)
        let recycled: UnsafeMutableRawBufferPointer? = cache.withLock { cache in
            guard cache.byteCount == size else {
                for storage in cache.free { storage.buffer.deallocate() }
                cache.free.removeAll()
                cache.byteCount = size
                return nil
            }
            return cache.free.popLast()?.buffer
        }
        let storage = recycled ?? {
            let fresh = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 64)
            fresh.initializeMemory(as: UInt8.self, repeating: 0)
            return fresh
        }()
        return PixelBuffer(
            format: format, width: width, height: height, planes: planes, adopting: storage,
            onRelease: { [self] storage in recycle(storage) }
        )
    }

    private func recycle(_ storage: UnsafeMutableRawBufferPointer) {
        let free = FreeStorage(buffer: storage)
        let kept = cache.withLock { cache in
            guard free.buffer.count == cache.byteCount, cache.free.count < limit else { return false }
            cache.free.append(free)
            return true
        }
        if !kept { storage.deallocate() }
    }
}
