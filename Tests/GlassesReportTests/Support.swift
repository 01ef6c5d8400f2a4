import Foundation
import GlassesReport

/// The test fixtures (real bridge output, see Fixtures/README.md).
enum Fixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func text(_ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }

    static func run(_ name: String) throws -> RunRecord {
        try RunRecord.parse(ndjson: try text(name), name: name)
    }

    /// The lines of an NDJSON fixture as Foundation objects: an independent reading to check the report against.
    static func objects(_ name: String) throws -> [[String: Any]] {
        try text(name).split(separator: "\n").compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// The reference of the replay fixture, on the run's clock (the run began at 10:00:00Z).
    static func replayReference(run: RunRecord) throws -> ReferenceSeries {
        let start = ISO8601DateFormatter().date(from: "2026-12-01T10:00:00Z")
        return try ReferenceReader.parse(try text("replay-reference.csv"), name: "replay-reference.csv", kind: .reference,
                                         runStart: start, run: 0...run.endTime)
    }
}

/// Counts occurrences of `needle` in `text`.
func occurrences(of needle: String, in text: String) -> Int {
    text.components(separatedBy: needle).count - 1
}
