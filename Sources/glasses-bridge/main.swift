import Foundation
import GlassesBridgeCommand

// glasses-bridge: smart-glasses camera stream -> SmartSpectra custom input -> live vitals. See --help.
exit(await BridgeCommandLine.main(Array(CommandLine.arguments.dropFirst())))
