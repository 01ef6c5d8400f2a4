import Foundation

/// Why a report could not be built: a code, and a message that names the file and line.
public struct ReportError: Error, Sendable, Hashable, LocalizedError, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable {
        /// A line of the input is not what it should be (bad JSON, a missing or wrong field, a number out of range).
        case malformedInput
        /// A file could not be read.
        case unreadable
        /// The reference's times do not overlap the run.
        case noOverlap
        /// A reference or truth file has no usable column (no time, no heart rate).
        case missingColumn
    }

    /// What went wrong.
    public var code: Code
    /// In a person's words, with file and line where there is one.
    public var message: String
    /// The 1-based line of the problem, when it is in a file.
    public var line: Int?

    /// Creates an error.
    public init(_ code: Code, _ message: String, line: Int? = nil) {
        self.code = code
        self.message = message
        self.line = line
    }

    /// The message.
    public var errorDescription: String? { message }
    /// The message.
    public var description: String { message }
}
