/// What a validation verdict is about, with SmartSpectra's stable code numbers (note the gap at 8 and 9).
///
/// Exactly the cases SmartSpectra's Swift SDK documents, so a `switch` written for it compiles here unchanged.
/// Codes are appended over SDK releases: like SmartSpectra's apps, end such a `switch` with `@unknown default`
/// (or `default`) to handle codes a newer source may send; ``init(rawValue:)`` returns nil for a number this build
/// does not know.
public enum ValidationCode: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The picture is fine for measuring.
    case ok = 0
    /// No face in view.
    case noFaceFound = 1
    /// More than one face in view.
    case multipleFacesFound = 2
    /// The face is off centre horizontally.
    case faceNotCentered = 3
    /// The face is too big or too small (deprecated by SmartSpectra in favour of ``faceTooClose`` and ``faceTooFar``;
    /// never produced here).
    case faceSizeOutOfRange = 4
    /// The picture is too dark.
    case tooDark = 5
    /// The picture is too bright.
    case tooBright = 6
    /// The upper chest is not in view.
    case chestNotVisible = 7
    /// The camera is still adjusting exposure or focus.
    case cameraTuning = 10
    /// Frames arrive too slowly.
    case frameRateTooLow = 11
    /// The face or the camera moves too much.
    case excessiveMotion = 12
    /// The face is too close.
    case faceTooClose = 13
    /// The face is too far.
    case faceTooFar = 14
    /// The face is too high in the frame.
    case faceTooHigh = 15
    /// The face is too low in the frame.
    case faceTooLow = 16
    /// The face does not look at the camera.
    case faceNotForward = 17

    /// The code's name, e.g. `noFaceFound`.
    public var description: String {
        switch self {
        case .ok: "ok"
        case .noFaceFound: "noFaceFound"
        case .multipleFacesFound: "multipleFacesFound"
        case .faceNotCentered: "faceNotCentered"
        case .faceSizeOutOfRange: "faceSizeOutOfRange"
        case .tooDark: "tooDark"
        case .tooBright: "tooBright"
        case .chestNotVisible: "chestNotVisible"
        case .cameraTuning: "cameraTuning"
        case .frameRateTooLow: "frameRateTooLow"
        case .excessiveMotion: "excessiveMotion"
        case .faceTooClose: "faceTooClose"
        case .faceTooFar: "faceTooFar"
        case .faceTooHigh: "faceTooHigh"
        case .faceTooLow: "faceTooLow"
        case .faceNotForward: "faceNotForward"
        }
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
        }
    }
}
