/// Walks the arguments: `--name value`, `--name=value`, flags and a stray positional.
public struct ArgumentCursor: Sendable {
    private let arguments: [String]
    private var index = 0
    /// Every argument that was neither an option nor an option's value, in order (all of them after `--`).
    public private(set) var positionals: [String] = []
    /// The first of ``positionals``.
    public var strayPositional: String? { positionals.first }

    /// Starts before the first argument.
    public init(_ arguments: [String]) { self.arguments = arguments }

    /// The next argument, not consumed.
    public var peek: String? { index < arguments.count ? arguments[index] : nil }

    /// Consumes the next argument.
    public mutating func advance() { index += 1 }

    /// The next option's name and its inline (`=`) value; nil at the end.
    public mutating func nextOption() throws(UsageError) -> (String, String?)? {
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                positionals += arguments[index...]
                index = arguments.count
                return nil
            }
            guard argument.hasPrefix("-"), argument.count > 1 else {
                positionals.append(argument)
                continue
            }
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
            }
            return (argument, nil)
        }
        return nil
    }

    /// The value of an option that takes one.
    public mutating func value(for name: String, inline: String?) throws(UsageError) -> String {
        if let inline { return inline }
        guard index < arguments.count else { throw UsageError("\(name) needs a value; see --help.") }
        let value = arguments[index]
        if value.hasPrefix("--") {
            throw UsageError("\(name) needs a value, but the next argument is the option '\(value)'.")
        }
        index += 1
        return value
    }

    /// The value of an option that names a file.
    public mutating func path(for name: String, inline: String?) throws(UsageError) -> String {
        let path = try value(for: name, inline: inline)
        guard !path.isEmpty else { throw UsageError("\(name) needs a file path.") }
        return path
    }

    /// Checks that a flag was not given a value.
    public func noValue(for name: String, inline: String?) throws(UsageError) {
        if let inline { throw UsageError("\(name) is a flag and takes no value (got '\(inline)').") }
    }
}
