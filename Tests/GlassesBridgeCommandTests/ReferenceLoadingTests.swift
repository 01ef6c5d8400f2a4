import Foundation
import GlassesBridge
@testable import GlassesBridgeCommand
import Testing

/// `check --reference`: a chest strap's recording, read with the report's reader, on the wall clock.
@Suite("Reference recordings for check")
struct ReferenceLoadingTests {
    @Test("CSV with ISO 8601 times, a heart-rate and an RR column (several per cell)")
    func csv() throws {
        let recording = try ReferenceRecording.read("""
        Timestamp,Heart Rate,RR (ms)
        2026-12-01T12:00:00Z,70,850 860
        2026-12-01T12:00:01.500Z,72,840
        """, source: "polar.csv")
        #expect(recording.samples.count == 2)
        #expect(recording.samples[0].rrIntervalsMs == [850, 860])
        #expect(recording.columnsUsed == "time=timestamp, hr=heartrate, rr=rrms")
        let start = Date(timeIntervalSince1970: 1_796_126_400)
        #expect(recording.samples[0].time == start)
        #expect(recording.heartRate(at: start.addingTimeInterval(0.75)) == 71)
        #expect(recording.heartRate(at: start.addingTimeInterval(60)) == nil)
        #expect(recording.rmssd(in: start...start.addingTimeInterval(2)).map { ($0 * 100).rounded() / 100 } == 15.81)
    }

    @Test("CSV with Unix milliseconds, and NDJSON with an RR array")
    func unixAndNDJSON() throws {
        let csv = try ReferenceRecording.read("time,hr\n1796126400000,65\n1796126401000,66\n", source: "a.csv")
        #expect(csv.samples.map(\.heartRate) == [65, 66] && csv.samples[0].time == Date(timeIntervalSince1970: 1_796_126_400))
        let ndjson = try ReferenceRecording.read("""
        {"time": "2026-12-01T12:00:00Z", "heartRate": 70, "rrIntervals": [850, 857]}
        {"time": 1796126401, "heartRate": 71}
        """, source: "b.ndjson")
        #expect(ndjson.samples.count == 2 && ndjson.hasRRIntervals && ndjson.columnsUsed == "time=time, hr=heartrate, rr=rrintervals")
    }

    @Test("the column names of report --reference work here too: one reader for both", arguments: [
        "date,bpm", "unix_ms,heart rate (bpm)", "timestamp,pulse", "datetime,pulse_rate", "Unix,HR (bpm)",
    ])
    func sameNamesAsTheReport(header: String) throws {
        let time = header.hasPrefix("unix_ms") ? "1796126400000" : header.lowercased().hasPrefix("unix") ? "1796126400" : "2026-12-01T12:00:00Z"
        let recording = try ReferenceRecording.read("\(header)\n\(time),64\n", source: "r.csv")
        #expect(recording.samples.map(\.heartRate) == [64] && recording.samples[0].time == Date(timeIntervalSince1970: 1_796_126_400))
    }

    @Test("a heart rate from the RR intervals alone")
    func rrOnly() throws {
        let recording = try ReferenceRecording.read("timestamp,rr\n2026-12-01T12:00:00Z,1000\n", source: "rr.csv")
        #expect(recording.samples.map(\.heartRate) == [60] && recording.hasRRIntervals)
    }

    @Test("a reference without the columns, with implausible numbers, or with times from a start is refused with its line", arguments: [
        ("when,hr\n1796126400,70\n", "no time column"),
        ("time,foo\n1796126400,70\n", "no heart-rate, RR, breathing or HRV column"),
        ("time,hr\n1796126400,700\n", ":2: heart rate 700 is outside 20–300"),
        ("time,hr\nyesterday,70\n", ":2: time 'yesterday' is neither seconds nor an ISO 8601 time"),
        ("time,hr,rr\n1796126400,70,9000\n", ":2: RR interval 9000 is outside 200–3000 ms"),
        ("{\"time\": 1796126400, \"hr\": 70}\n{\"time\": 2,", ":2: not JSON"),
        ("time,hr\n", "no data rows"),
        ("time_s,pulse\n1,72\n2,73\n", "seconds from a start, not wall-clock times"),
        ("time,breathingRate\n1796126400,14\n", "no heart rate and no RR intervals"),
    ])
    func refused(text: String, fragment: String) {
        #expect {
            _ = try ReferenceRecording.read(text, source: "x.csv")
        } throws: { error in
            (error as? ReferenceError)?.message.contains(fragment) == true
        }
    }

    @Test("a missing file is unreadable, said in words")
    func missingFile() {
        #expect {
            _ = try ReferenceRecording.load(contentsOf: "/nonexistent-\(getpid())/polar.csv")
        } throws: { error in
            guard let error = error as? ReferenceError else { return false }
            return error.code == .unreadable && error.message.contains("no such file") && !error.message.contains("could not be completed")
        }
    }
}
