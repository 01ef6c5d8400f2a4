// PLACEHOLDER owned by the vitals-engine work; replaced by the real benchmark.
import Foundation

func runVitalsBenchmark(_ arguments: [String]) {
    FileHandle.standardError.write(Data("vitals benchmark: not built yet\n".utf8))
    exit(70)
}
