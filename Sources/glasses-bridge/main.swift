import CommandSupport
import Foundation
import GlassesBridgeCommand

// glasses-bridge: smart-glasses camera stream -> SmartSpectra custom input -> live vitals. See --help.
// Frame-sized blocks stay mapped, so a stream that changes size does not leave the heap at its high-water mark.
LargeAllocations.keepLargeBlocksMapped()
exit(await BridgeCommandLine.main(Array(CommandLine.arguments.dropFirst())))
