// Benchmarks, run by Scripts/bench (decoding) and Scripts/bench-vitals (the vitals engine); never by the tests.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "decode":
    runDecodeBenchmark(Array(arguments.dropFirst()))
case "bridge":
    runBridgeBenchmark(Array(arguments.dropFirst()))
case "copies":
    runCopyBenchmark(Array(arguments.dropFirst()))
case "vitals":
    runVitalsBenchmark(Array(arguments.dropFirst()))
case "vitals-replay":
    runPhotoReplay(Array(arguments.dropFirst()))
case "vitals-frame":
    writePhotoFrame(Array(arguments.dropFirst()))
case "latency":
    runRelayLatencyBenchmark(Array(arguments.dropFirst()))
case "faces":
    runFaceSearchBenchmark(Array(arguments.dropFirst()))
case "streams":
    runStreamsBenchmark(Array(arguments.dropFirst()))
default:
    FileHandle.standardError.write(Data("usage: Benchmarks decode|bridge|faces|copies|vitals|vitals-replay|vitals-frame|latency|streams [options]\n".utf8))
    exit(64)
}
