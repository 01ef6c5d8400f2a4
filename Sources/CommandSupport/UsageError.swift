/// A command line a tool cannot run: printed with a pointer to `--help`, exit code 64.
public struct UsageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong and how to fix it.
    public let message: String

    /// Creates a usage error.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}
