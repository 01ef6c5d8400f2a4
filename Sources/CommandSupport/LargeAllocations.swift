#if canImport(Glibc)
    import Glibc
#endif

/// How the process's allocator serves large blocks (video frames, decoded pictures, pooled pixel storage).
///
/// glibc's malloc starts by serving blocks from 128 KiB up with `mmap`, but the first time such a block is freed it
/// raises that threshold to the block's size, and from then on frame-sized blocks come from the heap. A heap that
/// grew for frames of one size keeps its pages when the stream changes size (DAT's bandwidth adaptation), so the
/// resident size steps up at every new frame size and never comes down (docs/RELIABILITY.md, "Soak").
/// ``keepLargeBlocksMapped()`` fixes the threshold at 128 KiB: every frame-sized block is mapped on allocation and
/// returned to the kernel when freed. Pooled buffers are reused, so the cost is a map and an unmap per pool miss.
public enum LargeAllocations {
    /// The size from which blocks are mapped: glibc's own default, kept fixed.
    public static let mmapThreshold: Int32 = 128 * 1024

    /// Fixes glibc's mmap threshold at ``mmapThreshold`` (no dynamic raising); call once, early in `main`.
    /// - Returns: whether the allocator took the setting (false on a C library without `mallopt`).
    @discardableResult
    public static func keepLargeBlocksMapped() -> Bool {
        #if os(Linux)
            // mallopt is in <malloc.h>, which the Glibc module does not import; it is looked up instead.
            typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
            guard let symbol = dlsym(nil, "mallopt") else { return false }
            let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
            let mMmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD in <malloc.h>
            return mallopt(mMmapThreshold, mmapThreshold) == 1
        #else
            return false
        #endif
    }
}
