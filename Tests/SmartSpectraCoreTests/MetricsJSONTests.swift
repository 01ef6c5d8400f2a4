import Foundation
import Testing
@testable import SmartSpectraCore

@Suite("Metrics JSON (protobuf JSON mapping)")
struct MetricsJSONTests {
    static func sample() -> Metrics {
        var metrics = Metrics()
        metrics.breathing.rate = [MeasurementWithConfidence(value: 14.5, stable: true, confidence: 62, timestamp: 1_700_000_000_000_000)]
        metrics.breathing.upperTrace = [Measurement(value: -0.25, stable: false, timestamp: 33_333)]
        metrics.breathing.lowerTrace = [Measurement(value: 0, stable: false, timestamp: 0)]
        metrics.breathing.respiratoryLineLength = [Measurement(value: 3, stable: true, timestamp: 1)]
        metrics.breathing.inhaleExhaleRatio = [Measurement(value: 0.8, stable: true, timestamp: 2)]
        metrics.breathing.apnea = [DetectionStatus(detected: true, stable: true, timestamp: 5)]
        metrics.breathing.strict = Strict(value: 0)
        metrics.cardio.pulseRate = [MeasurementWithConfidence(value: 72, stable: true, confidence: 80, timestamp: Int64.max - 3)]
        metrics.cardio.arterialPressureTrace = [MeasurementWithConfidence(value: 0.5, stable: false, confidence: 0, timestamp: 9)]
        metrics.cardio.hrv = [Hrv(rmssd: 42.5, meanNn: 800, sdnn: 50.25, baevsky: 0.125, timestamp: 60_000_000, confidence: 55, stable: true)]
        metrics.eda.trace = []
        metrics.face.landmarks = [Landmarks(value: [Point2dFloat(x: 1.5, y: 0), Point2dFloat(x: 0, y: 2)], stable: true, reset: true, timestamp: 7)]
        metrics.face.expression = [Expression(stable: false, timestamp: 8, scores: [
            ExpressionScore(type: .happy, confidence: 90), ExpressionScore(type: .unspecified, confidence: 1),
        ])]
        metrics.face.blinking = [DetectionStatus(detected: false, stable: false, timestamp: 3)]
        return metrics
    }

    static let expectedJSON = #"{"breathing":{"rate":[{"value":14.5,"stable":true,"confidence":62,"timestamp":"1700000000000000"}],"#
        + #""upperTrace":[{"value":-0.25,"timestamp":"33333"}],"lowerTrace":[{}],"#
        + #""apnea":[{"detected":true,"stable":true,"timestamp":"5"}],"#
        + #""respiratoryLineLength":[{"value":3,"stable":true,"timestamp":"1"}],"#
        + #""inhaleExhaleRatio":[{"value":0.8,"stable":true,"timestamp":"2"}],"strict":{}},"#
        + #""eda":{},"#
        + #""face":{"blinking":[{"timestamp":"3"}],"landmarks":[{"value":[{"x":1.5},{"y":2}],"stable":true,"reset":true,"timestamp":"7"}],"#
        + #""expression":[{"timestamp":"8","scores":[{"type":"HAPPY","confidence":90},{"confidence":1}]}]},"#
        + #""cardio":{"pulseRate":[{"value":72,"stable":true,"confidence":80,"timestamp":"9223372036854775804"}],"#
        + #""arterialPressureTrace":[{"value":0.5,"timestamp":"9"}],"#
        + #""hrv":[{"rmssd":42.5,"meanNn":800,"sdnn":50.25,"baevsky":0.125,"timestamp":"60000000","confidence":55,"stable":true}]}}"#

    @Test("encodes with lowerCamelCase names, int64 strings, enum names, defaults omitted")
    func exactEncoding() {
        #expect(Self.sample().jsonString() == Self.expectedJSON)
    }

    @Test("round-trips through JSON")
    func roundTrip() throws {
        let sample = Self.sample()
        #expect(try Metrics(jsonString: sample.jsonString()) == sample)
        #expect(try Metrics(jsonUTF8Data: sample.jsonUTF8Data()) == sample)
        var options = JSONEncodingOptions()
        options.preserveProtoFieldNames = true
        options.alwaysPrintEnumsAsInts = true
        #expect(try Metrics(jsonString: sample.jsonString(options: options)) == sample)
        #expect(try Metrics(jsonString: Metrics().jsonString()) == Metrics())
        #expect(Metrics().jsonString() == "{}")
    }

    @Test("proto field names and numeric enums on request")
    func protoNames() {
        var options = JSONEncodingOptions()
        options.preserveProtoFieldNames = true
        options.alwaysPrintEnumsAsInts = true
        let json = Self.sample().jsonString(options: options)
        for name in ["\"upper_trace\"", "\"lower_trace\"", "\"respiratory_line_length\"", "\"inhale_exhale_ratio\"",
                     "\"pulse_rate\"", "\"arterial_pressure_trace\"", "\"mean_nn\"", "\"type\":5"] {
            #expect(json.contains(name), "\(name)")
        }
        #expect(!json.contains("upperTrace"))
    }

    @Test("every JSON name of the schema", arguments: [
        ("breathing", \Metrics.hasBreathing), ("cardio", \Metrics.hasCardio), ("eda", \Metrics.hasEda), ("face", \Metrics.hasFace),
    ] as [(String, KeyPath<Metrics, Bool> & Sendable)])
    func presence(_ name: String, _ has: KeyPath<Metrics, Bool> & Sendable) throws {
        let decoded = try Metrics(jsonString: "{\"\(name)\":{}}")
        #expect(decoded[keyPath: has])
        #expect(decoded.jsonString() == "{\"\(name)\":{}}")
    }

    @Test("decoding accepts proto names, bare int64, numeric enums, quoted numbers, null and non-finite values")
    func lenientDecoding() throws {
        let json = #"{"cardio":{"pulse_rate":[{"value":"71.5","timestamp":12,"confidence":null}],"#
            + #""hrv":[{"mean_nn":"NaN","rmssd":"Infinity","timestamp":"1e3"}]},"#
            + #""face":{"expression":[{"scores":[{"type":3},{"type":"SAD"}]}]},"breathing":null}"#
        let metrics = try Metrics(jsonString: json)
        #expect(metrics.cardio.pulseRate == [MeasurementWithConfidence(value: 71.5, stable: false, confidence: 0, timestamp: 12)])
        #expect(metrics.cardio.hrv[0].meanNn.isNaN)
        #expect(metrics.cardio.hrv[0].rmssd == .infinity)
        #expect(metrics.cardio.hrv[0].timestamp == 1_000)
        #expect(metrics.face.expression[0].scores.map(\.type) == [.disgust, .sad])
        #expect(!metrics.hasBreathing)
        #expect(metrics.jsonString().contains(#""meanNn":"NaN","#))
    }

    /// A bad document and the error code it must produce.
    struct BadDocument: Sendable, CustomTestStringConvertible {
        let json: String
        let code: MetricsJSONError.Code
        var testDescription: String { json }
    }

    @Test("bad documents are typed errors", arguments: [
        BadDocument(json: "", code: .malformedJSON),
        BadDocument(json: "{", code: .malformedJSON),
        BadDocument(json: #"{"cardio":{}} x"#, code: .malformedJSON),
        BadDocument(json: #"{"micromotion":{}}"#, code: .unknownField),
        BadDocument(json: #"{"cardio":{"pulseRate":[{"value":true}]}}"#, code: .invalidValue),
        BadDocument(json: #"{"cardio":{"pulseRate":[{"timestamp":"9223372036854775808"}]}}"#, code: .invalidValue),
        BadDocument(json: #"{"breathing":{"rate":[{"stable":1}]}}"#, code: .invalidValue),
        BadDocument(json: #"{"face":{"expression":[{"scores":[{"type":"GRUMPY"}]}]}}"#, code: .invalidValue),
        BadDocument(json: #"{"cardio":[]}"#, code: .invalidValue),
        BadDocument(json: String(repeating: "[", count: 500), code: .tooDeep),
    ])
    func badDocuments(_ row: BadDocument) {
        let error = #expect(throws: MetricsJSONError.self) { _ = try Metrics(jsonString: row.json) }
        #expect(error?.code == row.code)
    }

    @Test("malformed and too deep documents name their byte offset")
    func malformedOffsets() throws {
        let trailing = try #require(#expect(throws: MetricsJSONError.self) { _ = try Metrics(jsonString: #"{"cardio":{}} x"#) })
        #expect(trailing.code == .malformedJSON && trailing.path == "byte 14", "\(trailing)")
        let deep = try #require(#expect(throws: MetricsJSONError.self) {
            _ = try Metrics(jsonString: String(repeating: "[", count: 500))
        })
        #expect(deep.code == .tooDeep && deep.path == "byte 72", "\(deep)")
        let utf8 = try #require(#expect(throws: MetricsJSONError.self) {
            _ = try Metrics(jsonUTF8Data: Data([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]))
        })
        #expect(utf8.code == .malformedJSON && utf8.path == "byte 1", "\(utf8)")
    }

    @Test("unknown fields can be ignored")
    func ignoreUnknown() throws {
        var options = JSONDecodingOptions()
        options.ignoreUnknownFields = true
        let metrics = try Metrics(jsonString: #"{"micromotion":{"glutes":[]},"eda":{"trace":[{"value":2,"extra":1}]}}"#, options: options)
        #expect(metrics.eda.trace == [Measurement(value: 2, stable: false, timestamp: 0)])
    }
}

@Suite("Metric bundles")
struct MetricBundleTests {
    @Test("bundles hold the documented metrics")
    func bundles() {
        #expect(SmartSpectraConfig.breathingMetrics.map(\.rawValue) == [0, 1, 2, 3, 4, 5, 6, 7])
        #expect(SmartSpectraConfig.cardioMetrics == [.pulseRate, .arterialPressureTrace, .hrv])
        #expect(SmartSpectraConfig.faceMetrics == [.faceLandmarks, .blinking, .talking, .expressions])
        #expect(SmartSpectraConfig.edaMetrics == [.edaTrace])
        let all = SmartSpectraConfig.breathingMetrics + SmartSpectraConfig.cardioMetrics
            + SmartSpectraConfig.faceMetrics + SmartSpectraConfig.edaMetrics
        #expect(Set(all) == Set(MetricType.allCases))
        #expect(MetricType.pulseRate.protoName == "PULSE_RATE")
        #expect(MetricType.edaTrace.feature == .eda)
    }

    @Test("nil means the breathing bundle; duplicates are removed, first kept")
    func expansion() {
        let config = SmartSpectraConfig()
        #expect(config.requestedMetrics == nil)
        #expect(config.effectiveMetrics == Set(SmartSpectraConfig.breathingMetrics))
        config.requestedMetrics = [.hrv, .pulseRate, .hrv, .apnea, .pulseRate]
        #expect(config.requestedMetrics == [.hrv, .pulseRate, .apnea])
        #expect(config.effectiveMetrics == [.hrv, .pulseRate, .apnea])
        config.requestedMetrics = nil
        #expect(config.effectiveMetrics == Set(MetricType.breathingBundle))
    }

    @Test("restricting a payload keeps only requested fields")
    func restriction() {
        let full = MetricsJSONTests.sample()
        let restricted = full.restricted(to: [.pulseRate, .chestBreathing])
        #expect(restricted.hasCardio && restricted.hasBreathing && !restricted.hasFace && !restricted.hasEda)
        #expect(restricted.cardio.pulseRate == full.cardio.pulseRate)
        #expect(restricted.cardio.hrv.isEmpty && restricted.cardio.arterialPressureTrace.isEmpty)
        #expect(restricted.breathing.upperTrace == full.breathing.upperTrace)
        #expect(restricted.breathing.rate.isEmpty && restricted.breathing.strict == nil)
    }
}
