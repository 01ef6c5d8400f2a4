import Foundation

// Every public WearablesKit error reads as its own message through Foundation's `localizedDescription`.
// The DAT errors get it from `DatError`; the Linux-only ones that are declared elsewhere get it here.

extension MalformedSampleError: LocalizedError {
    /// The reason with the sample's presentation time, so `localizedDescription` says what was wrong.
    public var errorDescription: String? { description }
}
