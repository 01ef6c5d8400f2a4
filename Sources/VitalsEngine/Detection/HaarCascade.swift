import Foundation

/// A trained Viola–Jones face cascade of boosted Haar stumps, in OpenCV's XML layout (`opencv-data`).
///
/// Only the stump-based, upright-feature cascades (`haarcascade_frontalface_default.xml` and its `alt` siblings)
/// are supported; tree nodes and tilted features are rejected with ``VitalsEngineError/Code/cascadeMalformed``.
public struct HaarCascade: Sendable {
    /// One weighted rectangle of a Haar feature, in window coordinates.
    struct WeightedRect: Sendable {
        var x: Int, y: Int, width: Int, height: Int
        var weight: Float
    }

    /// One stump: a feature, a threshold and the two leaf values.
    struct Stump: Sendable {
        var feature: Int
        var threshold: Float
        var left: Float
        var right: Float
    }

    /// One stage: its stumps and its pass threshold.
    struct Stage: Sendable {
        var stumps: Range<Int>
        var threshold: Float
    }

    /// Window width the cascade was trained on.
    public let windowWidth: Int
    /// Window height the cascade was trained on.
    public let windowHeight: Int
    let features: [[WeightedRect]]
    let stumps: [Stump]
    let stages: [Stage]

    /// The number of stages.
    public var stageCount: Int { stages.count }
    /// The number of Haar features.
    public var featureCount: Int { features.count }

    /// Where the frontal-face cascade is looked for: `$VITALS_FACE_CASCADE` first, then Debian's `opencv-data` paths.
    public static var searchPaths: [String] {
        var paths: [String] = []
        if let env = ProcessInfo.processInfo.environment["VITALS_FACE_CASCADE"], !env.isEmpty { paths.append(env) }
        paths += [
            "/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml",
            "/usr/share/opencv/haarcascades/haarcascade_frontalface_default.xml",
            "/usr/local/share/opencv4/haarcascades/haarcascade_frontalface_default.xml",
        ]
        return paths
    }

    /// Loads the default frontal-face cascade from the first of ``searchPaths`` that exists.
    public static func frontalFace() throws(VitalsEngineError) -> HaarCascade {
        // Loaded once per process, under the lock: engines created together (several glasses starting at once)
        // wait for the one parse of the file instead of each parsing it. A failure is not kept: the next call tries
        // again.
        let loaded: Result<HaarCascade, VitalsEngineError> = cachedFrontalFace.withLock { cached in
            if let cached { return .success(cached) }
            for path in searchPaths where FileManager.default.fileExists(atPath: path) {
                let attempt = Result { () throws(VitalsEngineError) in try HaarCascade(contentsOfFile: path) }
                if case .success(let cascade) = attempt { cached = cascade }
                return attempt
            }
            return .failure(VitalsEngineError(
                code: .cascadeNotFound,
                message: "The frontal-face cascade is missing: install Debian's opencv-data package (Scripts/setup does) or set VITALS_FACE_CASCADE.",
                context: searchPaths.joined(separator: ", ")))
        }
        return try loaded.get()
    }

    private static let cachedFrontalFace = LockedBox<HaarCascade?>(nil)

    /// Loads a cascade from an OpenCV XML file.
    public init(contentsOfFile path: String) throws(VitalsEngineError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw VitalsEngineError(code: .cascadeNotFound, message: "Cannot read the cascade file.", context: path)
        }
        try self.init(xml: [UInt8](data), source: path)
    }

    /// Parses a cascade from the bytes of an OpenCV XML file.
    public init(xml bytes: [UInt8], source: String = "xml") throws(VitalsEngineError) {
        func malformed(_ why: String) -> VitalsEngineError {
            VitalsEngineError(code: .cascadeMalformed, message: "The cascade file is not a stump-based Haar cascade: \(why).", context: source)
        }
        var scanner = TagScanner(bytes: bytes)
        guard let type = scanner.text(of: "featureType"), type == "HAAR" else { throw malformed("featureType is not HAAR") }
        guard let h = scanner.text(of: "height").flatMap({ Int($0) }),
              let w = scanner.text(of: "width").flatMap({ Int($0) }), w > 2, h > 2, w <= 64, h <= 64 else {
            throw malformed("no window size")
        }
        guard let stagesRange = scanner.range(of: "stages"), let featuresRange = scanner.range(of: "features") else {
            throw malformed("no stages or features")
        }
        var stumps: [Stump] = []
        var stages: [Stage] = []
        var stageScanner = TagScanner(bytes: bytes, range: stagesRange)
        while let count = stageScanner.text(of: "maxWeakCount").flatMap({ Int($0) }) {
            guard count > 0, count < 10_000, let threshold = stageScanner.text(of: "stageThreshold").flatMap({ Float($0) }) else {
                throw malformed("bad stage header")
            }
            let first = stumps.count
            for _ in 0 ..< count {
                guard let nodes = stageScanner.text(of: "internalNodes")?.split(separator: " ").compactMap({ Float($0) }),
                      let leaves = stageScanner.text(of: "leafValues")?.split(separator: " ").compactMap({ Float($0) }) else {
                    throw malformed("stage truncated")
                }
                guard nodes.count == 4, leaves.count == 2, nodes[0] == 0, nodes[1] == -1 else { throw malformed("not a stump") }
                stumps.append(Stump(feature: Int(nodes[2]), threshold: nodes[3], left: leaves[0], right: leaves[1]))
            }
            stages.append(Stage(stumps: first ..< stumps.count, threshold: threshold))
        }
        var features: [[WeightedRect]] = []
        var featureScanner = TagScanner(bytes: bytes, range: featuresRange)
        while let rectsRange = featureScanner.range(of: "rects") {
            var rects: [WeightedRect] = []
            var rectScanner = TagScanner(bytes: bytes, range: rectsRange)
            while let text = rectScanner.text(of: "_") {
                let v = text.split(separator: " ").compactMap { Float($0) }
                guard v.count == 5 else { throw malformed("bad rectangle") }
                let r = WeightedRect(x: Int(v[0]), y: Int(v[1]), width: Int(v[2]), height: Int(v[3]), weight: v[4])
                guard r.x >= 0, r.y >= 0, r.width > 0, r.height > 0, r.x + r.width <= w, r.y + r.height <= h else {
                    throw malformed("rectangle outside the window")
                }
                rects.append(r)
            }
            guard (2 ... 3).contains(rects.count) else { throw malformed("feature with \(rects.count) rectangles") }
            features.append(rects)
        }
        guard !stages.isEmpty, !features.isEmpty else { throw malformed("empty cascade") }
        guard stumps.allSatisfy({ $0.feature >= 0 && $0.feature < features.count }) else { throw malformed("feature index out of range") }
        var tiltedScanner = TagScanner(bytes: bytes, range: featuresRange)
        while let t = tiltedScanner.text(of: "tilted") {
            if t != "0" { throw malformed("tilted features are not supported") }
        }
        self.windowWidth = w
        self.windowHeight = h
        self.features = features
        self.stumps = stumps
        self.stages = stages
    }
}

/// A tiny forward-only scanner for the flat tag structure of OpenCV cascade files.
struct TagScanner {
    let bytes: [UInt8]
    var position: Int
    let end: Int

    init(bytes: [UInt8], range: Range<Int>? = nil) {
        self.bytes = bytes
        self.position = range?.lowerBound ?? 0
        self.end = range?.upperBound ?? bytes.count
    }

    /// Finds `<tag>` from the current position (skipping comments implicitly by exact match) and returns the byte
    /// range of its content up to the matching `</tag>`; moves past the closing tag.
    mutating func range(of tag: String) -> Range<Int>? {
        let open = Array("<\(tag)>".utf8), close = Array("</\(tag)>".utf8)
        guard let start = find(open, from: position) else { return nil }
        let contentStart = start + open.count
        // Nested tags of the same name only occur for `_`; count depth.
        var depth = 1
        var i = contentStart
        while i < end {
            if matches(open, at: i) { depth += 1; i += open.count; continue }
            if matches(close, at: i) {
                depth -= 1
                if depth == 0 {
                    position = i + close.count
                    return contentStart ..< i
                }
                i += close.count
                continue
            }
            i += 1
        }
        return nil
    }

    /// The trimmed text content of the next `<tag>`.
    mutating func text(of tag: String) -> String? {
        guard let r = range(of: tag) else { return nil }
        let s = String(decoding: bytes[r], as: UTF8.self)
        return s.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }).joined(separator: " ")
    }

    private func matches(_ pattern: [UInt8], at i: Int) -> Bool {
        guard i + pattern.count <= end else { return false }
        for k in 0 ..< pattern.count where bytes[i + k] != pattern[k] { return false }
        return true
    }

    private func find(_ pattern: [UInt8], from start: Int) -> Int? {
        var i = start
        guard let first = pattern.first else { return nil }
        while i + pattern.count <= end {
            if bytes[i] == first, matches(pattern, at: i) { return i }
            i += 1
        }
        return nil
    }
}
