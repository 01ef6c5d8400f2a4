/// An error from the vitals engine: a code, a message a person can read, and the context it happened in.
public struct VitalsEngineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Hashable {
        /// The face-detector cascade file was not found.
        case cascadeNotFound
        /// The cascade file could not be parsed.
        case cascadeMalformed
        /// A frame's geometry is unusable.
        case invalidFrame
        /// A configuration value is out of range.
        case invalidConfiguration
    }

    /// What went wrong.
    public let code: Code
    /// A readable message.
    public let message: String
    /// Where or with what it happened.
    public let context: String

    /// Creates an error.
    public init(code: Code, message: String, context: String = "") {
        self.code = code
        self.message = message
        self.context = context
    }

    /// `message (context)`.
    public var description: String { context.isEmpty ? message : "\(message) (\(context))" }
}
