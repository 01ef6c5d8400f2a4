import CommandSupport

/// The process exit codes a run maps to: the shared table of both commands (``ExitCode``).
public typealias BridgeExitCode = ExitCode

/// A command line or option value the bridge cannot use (exit code 64).
public typealias BridgeUsageError = UsageError
