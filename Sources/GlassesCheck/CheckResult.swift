import GlassesBridge
import Foundation

/// What became of one check: it met its bound, missed it, could not run, or was left out.
package enum CheckVerdict: String, Sendable, Hashable, CaseIterable {
    /// Measured, within the bound.
    case pass
    /// Measured, outside the bound (JUnit `failure`).
    case fail
    /// Could not be measured: the device went away, the run crashed (JUnit `error`).
    case error
    /// Left out by the plan or the situation, e.g. a manual step with nobody at the terminal (JUnit `skipped`).
    case skipped
}

/// One check's outcome: what was measured, against which bound, and the verdict, in words a rack log can show.
package struct CheckResult: Sendable, Hashable {
    /// The group the check belongs to (JUnit `classname`): `link`, `stream.hvc1.medium.24`, `photo`, `lifecycle`, `vitals`.
    package var group: String
    /// The check's name within its group (JUnit `name`): `frame rate`, `capture mid-stream`, …
    package var name: String
    /// The verdict.
    package var verdict: CheckVerdict
    /// The measured value in words with its unit (`23.98 fps`), nil when nothing was measured.
    package var measured: String?
    /// The bound in words (`24 fps ± 5 %`), nil when the check has none.
    package var bound: String?
    /// What was measured against what bound, or why the check did not run.
    package var message: String
    /// A short machine name for a failure or error (`outOfTolerance`, `missing`, `notMeasured`, `deviceUnavailable`).
    package var failureType: String?
    /// The measured value as a number (in the unit of ``measured``), when it is one.
    package var value: Double?
    /// Seconds the check covered.
    package var seconds: Double
    /// Set when the device adapted the stream (DAT lowers resolution, then rate) and the check judged the adapted one.
    package var adaptation: String?

    /// Creates a result.
    package init(
        group: String, name: String, verdict: CheckVerdict, measured: String? = nil, bound: String? = nil,
        message: String, failureType: String? = nil, value: Double? = nil, seconds: Double = 0, adaptation: String? = nil
    ) {
        self.group = group
        self.name = name
        self.verdict = verdict
        self.measured = measured
        self.bound = bound
        self.message = message
        self.failureType = failureType
        self.value = value
        self.seconds = seconds
        self.adaptation = adaptation
    }

    /// `group: name`, the check's full name.
    package var fullName: String { "\(group): \(name)" }

    /// A check measured against a bound: pass when `within`, else a failure saying both.
    static func measured(
        _ group: String, _ name: String, within: Bool, measured: String, bound: String, value: Double?,
        seconds: Double, failureType: String = "outOfTolerance", detail: String? = nil, adaptation: String? = nil
    ) -> CheckResult {
        var message = within ? "measured \(measured); bound \(bound)" : "measured \(measured), expected \(bound)"
        if let detail { message += " (\(detail))" }
        return CheckResult(
            group: group, name: name, verdict: within ? .pass : .fail, measured: measured, bound: bound, message: message,
            failureType: within ? nil : failureType, value: value, seconds: seconds, adaptation: adaptation)
    }

    /// A check that was left out, and why.
    static func skipped(_ group: String, _ name: String, _ why: String) -> CheckResult {
        CheckResult(group: group, name: name, verdict: .skipped, message: why)
    }

    /// A check that could not run, and why.
    static func error(_ group: String, _ name: String, _ why: String, type: String = "error", seconds: Double = 0) -> CheckResult {
        CheckResult(group: group, name: name, verdict: .error, message: why, failureType: type, seconds: seconds)
    }
}

/// A `name = value` property of a check run (JUnit `property`): the device, the plan, the build.
package struct CheckProperty: Sendable, Hashable {
    /// The name.
    package var name: String
    /// The value.
    package var value: String

    /// Creates a property.
    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// Every result of one plan's run, with when and where it ran.
package struct CheckReport: Sendable, Hashable {
    /// The plan's name (the JUnit `testsuite`).
    package var planName: String
    /// Results in the order they ran.
    package var results: [CheckResult]
    /// Wall-clock start of the run.
    package var startedAt: Date
    /// Seconds the run took (scheduler time).
    package var seconds: Double
    /// Properties: device, plan, reference.
    package var properties: [CheckProperty]
    /// Set when the device could not be reached at all (exit 69): what was tried.
    package var unreachable: String?

    /// Creates a report.
    package init(
        planName: String, results: [CheckResult] = [], startedAt: Date = Date(), seconds: Double = 0,
        properties: [CheckProperty] = [], unreachable: String? = nil
    ) {
        self.planName = planName
        self.results = results
        self.startedAt = startedAt
        self.seconds = seconds
        self.properties = properties
        self.unreachable = unreachable
    }

    /// How many results have `verdict`.
    package func count(_ verdict: CheckVerdict) -> Int { results.filter { $0.verdict == verdict }.count }

    /// True when no check failed or errored and the device was reached (skipped checks do not fail a run).
    package var passed: Bool { unreachable == nil && count(.fail) == 0 && count(.error) == 0 }

    /// The results that did not pass or skip.
    package var problems: [CheckResult] { results.filter { $0.verdict == .fail || $0.verdict == .error } }

    /// The process exit code: 0 all passed, 1 a check failed or errored, 69 the device could not be reached.
    package var exitCode: Int32 { unreachable != nil ? 69 : (passed ? 0 : 1) }
}
