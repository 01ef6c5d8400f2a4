import Foundation

/// The option rules several of this repository's commands share (`glasses-bridge`, `glasses-sim`, `glasses-relay`),
/// each written once. A command's option table calls them from its declarations.
package enum SharedOptionRules {
    /// `--token TOKEN`: a pairing token, stream key or bearer token; never empty (a peer refuses an empty one).
    package static func token(_ value: String) throws(UsageError) -> String {
        guard !value.isEmpty else { throw UsageError("--token needs a non-empty token.") }
        return value
    }

    /// `--duration SECONDS`: above 0, up to 1e9 (what a `Duration` holds comfortably).
    package static func duration(_ value: String) throws(UsageError) -> Double {
        guard let seconds = DecimalArgument.parse(value), seconds > 0, seconds <= 1e9 else {
            throw UsageError("invalid --duration '\(value)': give a positive number of seconds up to 1e9, e.g. 30.")
        }
        return seconds
    }

    /// `--seed N`: a whole number from 0 to 2^64 − 1.
    package static func seed(_ value: String) throws(UsageError) -> UInt64 {
        guard let seed = UInt64(value) else { throw UsageError("--seed needs a whole number from 0 to 18446744073709551615, got '\(value)'.") }
        return seed
    }

    /// A number (`--pulse 66`, `--duration 1.5`), or a usage error that quotes it.
    package static func number(_ flag: String, _ value: String) throws(UsageError) -> Double {
        guard let number = DecimalArgument.parse(value) else { throw UsageError("\(flag) needs a number, got '\(value)'") }
        return number
    }

    /// A number in `range`, said in the option's own units when it is outside (`--pulse must be 25...240 bpm, got 0`):
    /// the simulated subject's options of glasses-sim and glasses-relay.
    package static func number(_ flag: String, _ value: String, in range: ClosedRange<Double>, unit: String) throws(UsageError) -> Double {
        let number = try number(flag, value)
        guard range.contains(number) else {
            func text(_ x: Double) -> String { String(format: "%g", x) }
            throw UsageError("\(flag) must be \(text(range.lowerBound))...\(text(range.upperBound))\(unit), got \(text(number))")
        }
        return number
    }
}
