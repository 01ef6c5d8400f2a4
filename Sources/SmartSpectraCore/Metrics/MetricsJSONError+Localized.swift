import Foundation

extension MetricsJSONError: LocalizedError {
    /// Where and what went wrong, so `localizedDescription` names the field and the problem.
    public var errorDescription: String? { description }
}
