/// One option of a command, declared once: its names, what it takes, and what it does to the command's parse state.
///
/// A command's options are a table of these (``OptionTable``): the parsing loop, the names offered as suggestions
/// for a misspelt option, and the tests that hold `--help` and the docs to the table all read the same declarations,
/// so an option's rule is written in one place. A rule several commands share (a token, a timeout) is one function
/// that makes the declaration for any state with the field.
public struct OptionDeclaration<State>: Sendable {
    /// What follows the option on the command line.
    public enum Argument: Sendable, Hashable {
        /// Nothing: a flag (`--realtime`); `--flag=value` is refused.
        case none
        /// A value, shown in help as `placeholder` (`--fps N`).
        case value(_ placeholder: String)
        /// A file path (never empty), shown as `placeholder`.
        case path(_ placeholder: String)
    }

    /// What parsing does after the option.
    public enum Outcome: Sendable {
        /// Go on with the next argument.
        case next
        /// Stop parsing: the option answers the command line by itself (`--help`, `--version`).
        case stop
    }

    /// The names, the long one first (`--output`, then `-o`).
    public let names: [String]
    /// What follows it.
    public let argument: Argument
    /// Applies the option (its value, nil for a flag) to the parse state; throws a ``UsageError`` naming the option
    /// and what it accepts (any other error is reported as a usage error with its description).
    public let apply: @Sendable (inout State, String?) throws -> Outcome

    /// Declares an option.
    public init(
        _ names: String..., argument: Argument = .none,
        apply: @escaping @Sendable (inout State, String?) throws -> Outcome
    ) {
        precondition(!names.isEmpty && names.allSatisfy { $0.hasPrefix("-") }, "an option has names that start with -")
        self.names = names
        self.argument = argument
        self.apply = apply
    }

    /// Declares an option that always goes on to the next argument.
    public static func setting(
        _ names: String..., argument: Argument = .none,
        apply: @escaping @Sendable (inout State, String?) throws -> Void
    ) -> OptionDeclaration {
        OptionDeclaration(names: names, argument: argument) { (state: inout State, value: String?) throws -> Outcome in
            try apply(&state, value)
            return .next
        }
    }

    private init(
        names: [String], argument: Argument, apply: @escaping @Sendable (inout State, String?) throws -> Outcome
    ) {
        self.names = names
        self.argument = argument
        self.apply = apply
    }

    /// The long name.
    public var name: String { names[0] }
}

/// A command's options: parses arguments into a state, and names every option for suggestions and help checks.
public struct OptionTable<State>: Sendable {
    /// The declarations, in the order `--help` lists them.
    public let options: [OptionDeclaration<State>]
    private let byName: [String: Int]

    /// A table of `options`; two declarations may not share a name.
    public init(_ options: [OptionDeclaration<State>]) {
        self.options = options
        var byName: [String: Int] = [:]
        for (index, option) in options.enumerated() {
            for name in option.names {
                precondition(byName.updateValue(index, forKey: name) == nil, "\(name) is declared twice")
            }
        }
        self.byName = byName
    }

    /// Every long name (for suggestions), in declaration order.
    public var longNames: [String] { options.map(\.name) }

    /// The declaration of `name` (long or short), if the table has it.
    public func declaration(named name: String) -> OptionDeclaration<State>? {
        byName[name].map { options[$0] }
    }

    /// Parses options from `cursor` into `state` until the arguments end or an option stops parsing.
    /// - Parameter unknown: the message for a name the table does not have.
    /// - Returns: whether an option stopped parsing (`--help`).
    /// - Throws: ``UsageError`` from an option's rule, for a missing value, a value given to a flag, or an unknown
    ///   option.
    public func parse(
        _ cursor: inout ArgumentCursor, into state: inout State, unknown: (String) -> String
    ) throws(UsageError) -> Bool {
        while let (name, inline) = try cursor.nextOption() {
            guard let option = declaration(named: name) else { throw UsageError(unknown(name)) }
            let value: String?
            switch option.argument {
            case .none:
                try cursor.noValue(for: name, inline: inline)
                value = nil
            case .value:
                value = try cursor.value(for: name, inline: inline)
            case .path:
                value = try cursor.path(for: name, inline: inline)
            }
            let outcome: OptionDeclaration<State>.Outcome
            do {
                outcome = try option.apply(&state, value)
            } catch let error as UsageError {
                throw error
            } catch {
                throw UsageError("\(name): \(error)")
            }
            if case .stop = outcome { return true }
        }
        return false
    }
}
