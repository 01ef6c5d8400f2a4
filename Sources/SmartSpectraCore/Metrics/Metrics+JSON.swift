import Foundation
import GlassesJSON

// Metrics in protobuf's canonical JSON mapping: lowerCamelCase field names, int64 as strings, enums by name,
// fields with default values (0, false, empty, unset) omitted, fields written in schema (field-number) order.

extension Metrics {
    /// The payload as protobuf JSON, e.g. `{"cardio":{"pulseRate":[{"value":72,"confidence":80,"timestamp":"1000"}]}}`.
    ///
    /// Unlike swift-protobuf's method of the same name this cannot fail, so it does not throw.
    public func jsonString(options: JSONEncodingOptions = JSONEncodingOptions()) -> String {
        var writer = ProtoJSONWriter(options: options)
        writer.message("breathing", "breathing", hasBreathing ? breathing.json(options) : nil)
        writer.message("eda", "eda", hasEda ? eda.json(options) : nil)
        writer.message("face", "face", hasFace ? face.json(options) : nil)
        writer.message("cardio", "cardio", hasCardio ? cardio.json(options) : nil)
        return writer.finish()
    }

    /// The payload as protobuf JSON, UTF-8 encoded.
    public func jsonUTF8Data(options: JSONEncodingOptions = JSONEncodingOptions()) -> Data {
        Data(jsonString(options: options).utf8)
    }

    /// Reads a payload from protobuf JSON (JSON or `.proto` field names; int64 as string or number; enums by name or
    /// number; `null` meaning the default).
    /// - Throws: ``MetricsJSONError``.
    public init(jsonString: String, options: JSONDecodingOptions = JSONDecodingOptions()) throws {
        try self.init(jsonBytes: Array(jsonString.utf8), options: options)
    }

    /// Reads a payload from UTF-8 protobuf JSON.
    /// - Throws: ``MetricsJSONError``.
    public init(jsonUTF8Data: Data, options: JSONDecodingOptions = JSONDecodingOptions()) throws {
        try self.init(jsonBytes: Array(jsonUTF8Data), options: options)
    }

    private init(jsonBytes: [UInt8], options: JSONDecodingOptions) throws(MetricsJSONError) {
        let value = try JSONValue.parse(jsonBytes, depthLimit: options.messageDepthLimit + 8)
        let reader = ProtoJSONReader(options: options, path: "", depth: 0)
        self.init()
        var result = Metrics()
        try reader.members(of: value, fields: [
            ("breathing", "breathing"), ("eda", "eda"), ("face", "face"), ("cardio", "cardio"),
        ]) { (name, field, member) throws(MetricsJSONError) in
            if case .null = member { return }
            switch name {
            case "breathing": result.breathing = try Breathing(field, member)
            case "eda": result.eda = try Eda(field, member)
            case "face": result.face = try Face(field, member)
            default: result.cardio = try Cardio(field, member)
            }
        }
        self = result
    }
}

extension Measurement {
    func json(_ options: JSONEncodingOptions) -> String {
        var w = ProtoJSONWriter(options: options)
        w.float("value", "value", value)
        w.bool("stable", "stable", stable)
        w.int64("timestamp", "timestamp", timestamp)
        return w.finish()
    }

    init(_ reader: ProtoJSONReader, _ value: JSONValue) throws(MetricsJSONError) {
        self.init(value: 0, stable: false, timestamp: 0)
        var result = self
        try reader.members(of: value, fields: [("value", "value"), ("stable", "stable"), ("timestamp", "timestamp")]) {
            (name, field, member) throws(MetricsJSONError) in
            switch name {
            case "value": result.value = try field.float(member)
            case "stable": result.stable = try field.bool(member)
            default: result.timestamp = try field.int64(member)
            }
        }
        self = result
    }
}

extension MeasurementWithConfidence {
    func json(_ options: JSONEncodingOptions) -> String {
        var w = ProtoJSONWriter(options: options)
        w.float("value", "value", value)
        w.bool("stable", "stable", stable)
        w.float("confidence", "confidence", confidence)
        w.int64("timestamp", "timestamp", timestamp)
        return w.finish()
    }

    init(_ reader: ProtoJSONReader, _ value: JSONValue) throws(MetricsJSONError) {
        self.init(value: 0, stable: false, confidence: 0, timestamp: 0)
        var result = self
        try reader.members(of: value, fields: [
            ("value", "value"), ("stable", "stable"), ("confidence", "confidence"), ("timestamp", "timestamp"),
        ]) { (name, field, member) throws(MetricsJSONError) in
            switch name {
            case "value": result.value = try field.float(member)
            case "stable": result.stable = try field.bool(member)
            case "confidence": result.confidence = try field.float(member)
            default: result.timestamp = try field.int64(member)
            }
        }
        self = result
    }
}

extension DetectionStatus {
    func json(_ options: JSONEncodingOptions) -> String {
        var w = ProtoJSONWriter(options: options)
        w.bool("detected", "detected", detected)
        w.bool("stable", "stable", stable)
        w.int64("timestamp", "timestamp", timestamp)
        return w.finish()
    }

    init(_ reader: ProtoJSONReader, _ value: JSONValue) throws(MetricsJSONError) {
        self.init(detected: false, stable: false, timestamp: 0)
        var result = self
        try reader.members(of: value, fields: [("detected", "detected"), ("stable", "stable"), ("timestamp", "timestamp")]) {
            (name, field, member) throws(MetricsJSONError) in
            switch name {
            case "detected": result.detected = try field.bool(member)
            case "stable": result.stable = try field.bool(member)
            default: result.timestamp = try field.int64(member)
            }
        }
        self = result
    }
}

extension Strict {
    func json(_ options: JSONEncodingOptions) -> String {
        var w = ProtoJSONWriter(options: options)
        w.float("value", "value", value)
        return w.finish()
    }

    init(_ reader: ProtoJSONReader, _ value: JSONValue) throws(MetricsJSONError) {
        self.init()
        var result = self
        try reader.members(of: value, fields: [("value", "value")]) { (_, field, member) throws(MetricsJSONError) in
            result.value = try field.float(member)
        }
        self = result
    }
}

extension Breathing {
    private static let fields: [(json: String, proto: String)] = [
        ("rate", "rate"), ("upperTrace", "upper_trace"), ("lowerTrace", "lower_trace"), ("amplitude", "amplitude"),
        ("apnea", "apnea"), ("respiratoryLineLength", "respiratory_line_length"), ("baseline", "baseline"),
        ("inhaleExhaleRatio", "inhale_exhale_ratio"), ("strict", "strict"),
    ]

    func json(_ options: JSONEncodingOptions) -> String {
        var w = ProtoJSONWriter(options: options)
        w.repeated("rate", "rate", rate.map { $0.json(options) })
        w.repeated("upperTrace", "upper_trace", upperTrace.map { $0.json(options) })
        w.repeated("lowerTrace", "lower_trace", lowerTrace.map { $0.json(options) })
        w.repeated("amplitude", "amplitude", amplitude.map { $0.json(options) })
        w.repeated("apnea", "apnea", apnea.map { $0.json(options) })
        w.repeated("respiratoryLineLength", "respiratory_line_length", respiratoryLineLength.map { $0.json(options) })
        w.repeated("baseline", "baseline", baseline.map { $0.json(options) })
        w.repeated("inhaleExhaleRatio", "inhale_exhale_ratio", inhaleExhaleRatio.map { $0.json(options) })
        w.message("strict", "strict", strict?.json(options))
        return w.finish()
    }

    init(_ reader: ProtoJSONReader, _ value: JSONValue) throws(MetricsJSONError) {
        self.init()
        var r = self
        try reader.members(of: value, fields: Self.fields) { (name, field, member) throws(MetricsJSONError) in
            switch name {
            case "rate": r.rate = try field.messages(member, MeasurementWithConfidence.init)
            case "upperTrace": r.upperTrace = try field.messages(member, Measurement.init)
            case "lowerTrace": r.lowerTrace = try field.messages(member, Measurement.init)
            case "amplitude": r.amplitude = try field.messages(member, Measurement.init)
            case "apnea": r.apnea = try field.messages(member, DetectionStatus.init)
            case "respiratoryLineLength": r.respiratoryLineLength = try field.messages(member, Measurement.init)
            case "baseline": r.baseline = try field.messages(member, Measurement.init)
            case "inhaleExhaleRatio": r.inhaleExhaleRatio = try field.messages(member, Measurement.init)
            default:
                if case .null = member { r.strict = nil } else { r.strict = try Strict(field, member) }
            }
        }
        self = r
    }
}

extension Hrv {
    func json(_ options: JSONEncodingOptions) -> String {
        var w = ProtoJSONWriter(options: options)
        w.double("rmssd", "rmssd", rmssd)
        w.double("meanNn", "mean_nn", meanNn)
        w.double("sdnn", "sdnn", sdnn)
        w.double("baevsky", "baevsky", baevsky)
        w.int64("timestamp", "timestamp", timestamp)
        w.float("confidence", "confidence", confidence)
        w.bool("stable", "stable", stable)
        return w.finish()
    }

    init(_ reader: ProtoJSONReader, _ value: JSONValue) throws(MetricsJSONError) {
        self.init(rmssd: 0, meanNn: 0, sdnn: 0, baevsky: 0, timestamp: 0, confidence: 0, stable: false)
        var r = self
        try reader.members(of: value, fields: [
            ("rmssd", "rmssd"), ("meanNn", "mean_nn"), ("sdnn", "sdnn"), ("baevsky", "baevsky"),
            ("timestamp", "timestamp"), ("confidence", "confidence"), ("stable", "stable"),
        ]) { (name, field, member) throws(MetricsJSONError) in
            switch name {
            case "rmssd": r.rmssd = try field.double(member)
            case "meanNn": r.meanNn = try field.double(member)
            case "sdnn": r.sdnn = try field.double(member)
            case "baevsky": r.baevsky = try field.double(member)
            case "timestamp": r.timestamp = try field.int64(member)
            case "confidence": r.confidence = try field.float(member)
            default: r.stable = try field.bool(member)
            }
        }
        self = r
    }
}

extension Cardio {
    func json(_ options: JSONEncodingOptions) -> String {
        var w = ProtoJSONWriter(options: options)
        w.repeated("pulseRate", "pulse_rate", pulseRate.map { $0.json(options) })
        w.repeated("arterialPressureTrace", "arterial_pressure_trace", arterialPressureTrace.map { $0.json(options) })
        w.repeated("hrv", "hrv", hrv.map { $0.json(options) })
        return w.finish()
    }

    init(_ reader: ProtoJSONReader, _ value: JSONValue) throws(MetricsJSONError) {
        self.init()
        var r = self
        try reader.members(of: value, fields: [
            ("pulseRate", "pulse_rate"), ("arterialPressureTrace", "arterial_pressure_trace"), ("hrv", "hrv"),
        ]) { (name, field, member) throws(MetricsJSONError) in
            switch name {
            case "pulseRate": r.pulseRate = try field.messages(member, MeasurementWithConfidence.init)
            case "arterialPressureTrace": r.arterialPressureTrace = try field.messages(member, MeasurementWithConfidence.init)
            default: r.hrv = try field.messages(member, Hrv.init)
            }
        }
        self = r
    }
}

extension Eda {
    func json(_ options: JSONEncodingOptions) -> String {
        var w = ProtoJSONWriter(options: options)
        w.repeated("trace", "trace", trace.map { $0.json(options) })
        return w.finish()
    }

    init(_ reader: ProtoJSONReader, _ value: JSONValue) throws(MetricsJSONError) {
        self.init()
        var r = self
        try reader.members(of: value, fields: [("trace", "trace")]) { (_, field, member) throws(MetricsJSONError) in
            r.trace = try field.messages(member, Measurement.init)
        }
        self = r
    }
}

extension Point2dFloat {
    func json(_ options: JSONEncodingOptions) -> String {
        var w = ProtoJSONWriter(options: options)
        w.float("x", "x", x)
        w.float("y", "y", y)
        return w.finish()
    }

    init(_ reader: ProtoJSONReader, _ value: JSONValue) throws(MetricsJSONError) {
        self.init(x: 0, y: 0)
        var r = self
        try reader.members(of: value, fields: [("x", "x"), ("y", "y")]) { (name, field, member) throws(MetricsJSONError) in
            if name == "x" { r.x = try field.float(member) } else { r.y = try field.float(member) }
        }
        self = r
    }
}

extension Landmarks {
    func json(_ options: JSONEncodingOptions) -> String {
        var w = ProtoJSONWriter(options: options)
        w.repeated("value", "value", value.map { $0.json(options) })
        w.bool("stable", "stable", stable)
        w.bool("reset", "reset", reset)
        w.int64("timestamp", "timestamp", timestamp)
        return w.finish()
    }

    init(_ reader: ProtoJSONReader, _ value: JSONValue) throws(MetricsJSONError) {
        self.init(value: [], stable: false, reset: false, timestamp: 0)
        var r = self
        try reader.members(of: value, fields: [
            ("value", "value"), ("stable", "stable"), ("reset", "reset"), ("timestamp", "timestamp"),
        ]) { (name, field, member) throws(MetricsJSONError) in
            switch name {
            case "value": r.value = try field.messages(member, Point2dFloat.init)
            case "stable": r.stable = try field.bool(member)
            case "reset": r.reset = try field.bool(member)
            default: r.timestamp = try field.int64(member)
            }
        }
        self = r
    }
}

extension ExpressionType {
    /// The protobuf enum value name, e.g. `HAPPY`.
    public var protoName: String {
        switch self {
        case .unspecified: "UNSPECIFIED"
        case .angry: "ANGRY"
        case .contempt: "CONTEMPT"
        case .disgust: "DISGUST"
        case .fear: "FEAR"
        case .happy: "HAPPY"
        case .neutral: "NEUTRAL"
        case .sad: "SAD"
        case .surprise: "SURPRISE"
        }
    }
}

extension ExpressionScore {
    func json(_ options: JSONEncodingOptions) -> String {
        var w = ProtoJSONWriter(options: options)
        w.enumValue("type", "type", number: type.rawValue, name: type.protoName)
        w.float("confidence", "confidence", confidence)
        return w.finish()
    }

    init(_ reader: ProtoJSONReader, _ value: JSONValue) throws(MetricsJSONError) {
        self.init(type: .unspecified, confidence: 0)
        var r = self
        try reader.members(of: value, fields: [("type", "type"), ("confidence", "confidence")]) {
            (name, field, member) throws(MetricsJSONError) in
            guard name == "type" else {
                r.confidence = try field.float(member)
                return
            }
            switch member {
            case .null: r.type = .unspecified
            case .string(let text):
                guard let known = ExpressionType.allCases.first(where: { $0.protoName == text }) else {
                    throw field.invalid("unknown ExpressionType \"\(text)\"")
                }
                r.type = known
            case .number(let text):
                guard let number = Int(text), let known = ExpressionType(rawValue: number) else {
                    throw field.invalid("unknown ExpressionType \(text)")
                }
                r.type = known
            default:
                throw field.invalid("expected an enum name or number")
            }
        }
        self = r
    }
}

extension Expression {
    func json(_ options: JSONEncodingOptions) -> String {
        var w = ProtoJSONWriter(options: options)
        w.bool("stable", "stable", stable)
        w.int64("timestamp", "timestamp", timestamp)
        w.repeated("scores", "scores", scores.map { $0.json(options) })
        return w.finish()
    }

    init(_ reader: ProtoJSONReader, _ value: JSONValue) throws(MetricsJSONError) {
        self.init(stable: false, timestamp: 0, scores: [])
        var r = self
        try reader.members(of: value, fields: [("stable", "stable"), ("timestamp", "timestamp"), ("scores", "scores")]) {
            (name, field, member) throws(MetricsJSONError) in
            switch name {
            case "stable": r.stable = try field.bool(member)
            case "timestamp": r.timestamp = try field.int64(member)
            default: r.scores = try field.messages(member, ExpressionScore.init)
            }
        }
        self = r
    }
}

extension Face {
    func json(_ options: JSONEncodingOptions) -> String {
        var w = ProtoJSONWriter(options: options)
        w.repeated("blinking", "blinking", blinking.map { $0.json(options) })
        w.repeated("talking", "talking", talking.map { $0.json(options) })
        w.repeated("landmarks", "landmarks", landmarks.map { $0.json(options) })
        w.repeated("expression", "expression", expression.map { $0.json(options) })
        return w.finish()
    }

    init(_ reader: ProtoJSONReader, _ value: JSONValue) throws(MetricsJSONError) {
        self.init()
        var r = self
        try reader.members(of: value, fields: [
            ("blinking", "blinking"), ("talking", "talking"), ("landmarks", "landmarks"), ("expression", "expression"),
        ]) { (name, field, member) throws(MetricsJSONError) in
            switch name {
            case "blinking": r.blinking = try field.messages(member, DetectionStatus.init)
            case "talking": r.talking = try field.messages(member, DetectionStatus.init)
            case "landmarks": r.landmarks = try field.messages(member, Landmarks.init)
            default: r.expression = try field.messages(member, Expression.init)
            }
        }
        self = r
    }
}
