import Foundation
@testable import GlassesBridge
import Testing

/// Messages in the user's terms: retry lines as sentences, no type names or raw numbers.
@Suite("Message wording")
struct MessageWordingTests {
    @Test("a file's message names the file once, whether or not the reader's own message did")
    func aFileIsNamedOnce() {
        #expect(FilePlaybackSource.naming("t.y4m", "t.y4m is truncated: frame 2") == "t.y4m is truncated: frame 2")
        #expect(FilePlaybackSource.naming("t.y4m", "not a video file") == "t.y4m: not a video file")
        // Opening: led by "Cannot play" only where the reader's message does not name the file.
        #expect(FilePlaybackSource.naming("t.mp4", "t.mp4 is truncated: no index", lead: "Cannot play") == "t.mp4 is truncated: no index")
        #expect(FilePlaybackSource.naming("t.mp4", "cannot open t.mp4: no such file", lead: "Cannot play") == "Cannot open t.mp4: no such file")
        #expect(FilePlaybackSource.naming("t.mp4", "no video stream", lead: "Cannot play") == "Cannot play t.mp4: no video stream")
    }

    @Test func theRetryLinesOfTheLifecyclePolicyReadAsSentences() {
        // A link that was up, lost, then refused on the first reconnect attempt: the policy's own schedule.
        var policy = LifecyclePolicy(configuration: LifecyclePolicy.Configuration())
        _ = policy.start(now: .zero)
        _ = policy.linkConnected(now: .zero)
        for action in policy.linkLost("link closed", now: .seconds(1)) {
            if case .schedule(let timer, _, let generation) = action, timer == .reconnect {
                _ = policy.timerFired(timer, generation: generation, now: .seconds(3))
            }
        }
        let actions = policy.connectFailed("connection refused", now: .seconds(3))
        let notices = actions.compactMap { action -> String? in
            if case .notice(let text) = action { return text }
            return nil
        }
        #expect(notices.count == 1)
        let notice = notices.first
        let line = NoticeWording.sentence(notice ?? "")
        #expect(line == "Reconnect failed (connection refused); trying again in 4 s.", "\(line)")
        var context = OutputContext()
        context.verbosity = .verbose
        var formatter = TextEventFormatter(context: context)
        #expect(formatter.format(.notice(notice ?? ""), at: 1).hasSuffix("Reconnect failed (connection refused); trying again in 4 s.\n"))
        #expect(NoticeWording.sentence("session ended by device (fold); starting a new one in 4 s")
                    == "Session ended by device (fold); starting a new one in 4 s.")
        #expect(NoticeWording.sentence("source: sim") == "source: sim")
    }

    @Test func theTextFormatPrintsErrorsWithoutTheirCodeName() {
        var formatter = TextEventFormatter(live: false)
        let line = formatter.format(.error(code: "outputFailed", message: "Cannot write --record x.mp4."), at: 0)
        #expect(!line.contains("outputFailed"))
        #expect(line.contains("error: Cannot write --record x.mp4."))
    }

    @Test func noCommandOrFormatterInterpolatesATypedErrorWhole() throws {
        // `\(error)` of a typed error prints its type and fields; what is printed must be its message.
        let root = docsDirectory().deletingLastPathComponent()
        let files = ["Sources/GlassesBridgeCommand/Program/BridgeCommandLine.swift",
                     "Sources/GlassesBridgeCommand/Program/SimulatorSource.swift",
                     "Sources/GlassesBridgeCommand/Program/Sinks/OutputSink.swift",
                     "Sources/GlassesBridge/Output/EventFormatters.swift",
                     "Sources/GlassesBridge/Output/TextEventFormatter.swift",
                     "Sources/GlassesBridge/Output/NDJSONEventFormatter.swift",
                     "Sources/GlassesBridge/Output/CSVEventFormatter.swift",
                     "Sources/GlassesBridge/Output/LiveStatus.swift",
                     "Sources/GlassesBridgeCommand/Program/Sinks/RunReportRecorder.swift",
                     "Sources/GlassesBridgeCommand/Program/Sinks/RunSinks.swift"]
        for file in files {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            #expect(!text.contains("\\(error)"), "\(file) interpolates \\(error)")
            #expect(!text.contains("localizedDescription)\""), "\(file)")
        }
    }
}
