// PLACEHOLDER owned by the decoding work; replaced by the real benchmark.
import Foundation

func runDecodeBenchmark(_ arguments: [String]) {
    FileHandle.standardError.write(Data("decode benchmark: not built yet\n".utf8))
    exit(70)
}
