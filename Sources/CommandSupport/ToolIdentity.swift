import Foundation

/// What a command-line tool of this repository says about itself: its name, its `--version` line and the usage line
/// printed under a usage error; and how it ends before anything ran. One copy for `glasses-sim` and `glasses-relay`.
package struct ToolIdentity: Sendable {
    /// The tool's name, as messages start (`glasses-sim`).
    package let name: String
    /// The `--version` line.
    package let version: String
    /// The usage line printed under a usage error.
    package let usageLine: String

    /// A tool called `name` at `version`, whose usage errors end with `usageLine`.
    package init(name: String, version: String, usageLine: String) {
        self.name = name
        self.version = "\(name) \(version)"
        self.usageLine = usageLine
    }

    /// Ends the process before anything ran: `NAME: error: message` on standard error (with the usage line under a
    /// usage error), then the exit code.
    package func fail(_ message: String, _ code: ExitCode = .usage) -> Never {
        let hint = code == .usage ? "\n\(usageLine)" : ""
        ConsoleText.standardError("\(name): error: \(message)\(hint)\n")
        exit(code.rawValue)
    }

    /// The message for an option this tool does not have, with the nearest known one suggested.
    package func unknownOption(_ option: String, known: [String]) -> String {
        OptionSuggestion.unknownOptionMessage(option, known: known, tool: name, command: nil)
    }
}
