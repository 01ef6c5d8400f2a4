import GlassesBridge
@testable import GlassesBridgeCommand
import Testing

/// The options a `glasses-bridge` command line parses to (a usage error, or another command, fails the test).
func options(_ arguments: [String]) throws -> BridgeOptions {
    guard case .run(let options) = try BridgeCommand.parse(arguments) else {
        Issue.record("expected a run command for \(arguments)")
        return BridgeOptions()
    }
    return options
}

/// The usage error a `glasses-bridge` command line gives, or nil when it parses.
func usageError(_ arguments: [String]) -> String? {
    do {
        _ = try BridgeCommand.parse(arguments)
        return nil
    } catch {
        return error.message
    }
}
