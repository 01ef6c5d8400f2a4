import Foundation

/// An error from the SDK: a code with its stable number, a message and whether retrying can help.
///
/// A `LocalizedError`, as on iOS: `error.localizedDescription` (and ``errorDescription``) is ``message``.
public struct SmartSpectraError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The kind of error, with the wire values shared with the C++ and Android SDKs.
    public enum Code: Int, Sendable, Hashable, CaseIterable {
        case invalidState = 1, authenticationFailed = 2, configurationFailed = 3, creditExhausted = 4
        case networkError = 5, serverError = 6, inputUnavailable = 7, processingFailed = 8
        case frameConversionFailed = 9, nonMonotonicTimestamp = 10, timestampGap = 11
    }

    /// The kind of error.
    public let code: Code
    /// What went wrong, for a person.
    public let message: String
    /// Whether the same call may succeed later.
    public let retryable: Bool

    /// Creates an error.
    public init(code: Code, message: String, retryable: Bool = false) {
        self.code = code
        self.message = message
        self.retryable = retryable
    }

    /// The message, as `errorDescription` returns it on Apple platforms; `localizedDescription` reads it.
    public var errorDescription: String? { message }

    /// `code (number): message`.
    public var description: String { "\(code) (\(code.rawValue)): \(message)" }
}
