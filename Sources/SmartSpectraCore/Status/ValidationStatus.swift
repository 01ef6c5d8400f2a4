/// What a validation verdict is about, with SmartSpectra's stable code numbers.
///
/// Codes are appended over SDK releases, so an unknown number is kept as ``unknown(_:)`` rather than dropped.
public enum ValidationCode: Sendable, Hashable, CustomStringConvertible {
    case ok, noFaceFound, multipleFacesFound, faceNotCentered, faceSizeOutOfRange, tooDark, tooBright
    case chestNotVisible, cameraTuning, frameRateTooLow, excessiveMotion, faceTooClose, faceTooFar
    case faceTooHigh, faceTooLow, faceNotForward
    /// A code this build does not know yet.
    case unknown(Int)

    private static let table: [(ValidationCode, Int, String)] = [
        (.ok, 0, "ok"), (.noFaceFound, 1, "noFaceFound"), (.multipleFacesFound, 2, "multipleFacesFound"),
        (.faceNotCentered, 3, "faceNotCentered"), (.faceSizeOutOfRange, 4, "faceSizeOutOfRange"),
        (.tooDark, 5, "tooDark"), (.tooBright, 6, "tooBright"), (.chestNotVisible, 7, "chestNotVisible"),
        (.cameraTuning, 10, "cameraTuning"), (.frameRateTooLow, 11, "frameRateTooLow"),
        (.excessiveMotion, 12, "excessiveMotion"), (.faceTooClose, 13, "faceTooClose"), (.faceTooFar, 14, "faceTooFar"),
        (.faceTooHigh, 15, "faceTooHigh"), (.faceTooLow, 16, "faceTooLow"), (.faceNotForward, 17, "faceNotForward"),
    ]

    /// Creates a code from its number; unknown numbers become ``unknown(_:)``.
    public init(rawValue: Int) {
        self = Self.table.first(where: { $0.1 == rawValue })?.0 ?? .unknown(rawValue)
    }

    /// The stable code number.
    public var rawValue: Int {
        if case .unknown(let value) = self { return value }
        return Self.table.first(where: { $0.0 == self })!.1
    }

    /// The code's name, e.g. `noFaceFound`.
    public var description: String {
        if case .unknown(let value) = self { return "unknown(\(value))" }
        return Self.table.first(where: { $0.0 == self })!.2
    }
}

/// A validation verdict: a code and a hint a person can act on. Meaningful only while processing runs.
public struct ValidationStatus: Sendable, Hashable {
    /// What the verdict is about.
    public let code: ValidationCode
    /// A human-readable hint describing what needs to change.
    public let hint: String

    /// Creates a verdict with the default hint for its code.
    public init(code: ValidationCode) {
        self.init(code: code, hint: Self.defaultHint(for: code))
    }

    /// Creates a verdict with a specific hint.
    public init(code: ValidationCode, hint: String) {
        self.code = code
        self.hint = hint
    }

    /// The default hint for a code.
    public static func defaultHint(for code: ValidationCode) -> String {
        switch code {
        case .ok: "Measuring."
        case .noFaceFound: "No face found: make sure one face is in view of the camera."
        case .multipleFacesFound: "More than one face in view: make sure only one person is in front of the camera."
        case .faceNotCentered: "Center the face in the frame."
        case .faceSizeOutOfRange: "Move so the face fills a reasonable part of the frame."
        case .tooDark: "The picture is too dark: add light in front of the face."
        case .tooBright: "The picture is too bright: reduce direct light or move out of the glare."
        case .chestNotVisible: "Keep the upper chest in view for breathing."
        case .cameraTuning: "The camera is still adjusting exposure and focus."
        case .frameRateTooLow: "The frame rate is too low: stream at 24 or 30 fps, with enough light."
        case .excessiveMotion: "Too much motion: hold still for a moment."
        case .faceTooClose: "The face is too close: move back from the camera."
        case .faceTooFar: "The face is too far: move closer to the camera."
        case .faceTooHigh: "The face is too high in the frame: lower the camera or move down."
        case .faceTooLow: "The face is too low in the frame: raise the camera or move up."
        case .faceNotForward: "Face the camera directly."
        case .unknown(let value): "Validation code \(value) (not known to this version)."
        }
    }
}
