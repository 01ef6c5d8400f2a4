import Foundation

/// Puts the lifecycle policy's retry notices (`reconnect failed: connection refused in 2 s`) into sentences a person
/// reads at a glance (`Reconnect failed (connection refused); trying again in 2 s.`). Other notices pass unchanged.
package enum NoticeWording {
    /// The notice as it is printed.
    package static func sentence(_ notice: String) -> String {
        guard let range = notice.range(of: #" in [0-9]+(\.[0-9]+)? s$"#, options: .regularExpression) else { return notice }
        let delay = notice[range].dropFirst(" in ".count)
        let body = String(notice[..<range.lowerBound])
        let text: String
        if let semicolon = body.range(of: "; ") {
            // "what happened; what is done next" + delay.
            text = "\(capitalized(String(body[..<semicolon.lowerBound]))); \(body[semicolon.upperBound...]) in \(delay)."
        } else if let colon = body.range(of: ": ") {
            // "what failed: why" + delay.
            let why = body[colon.upperBound...].trimmingCharacters(in: CharacterSet(charactersIn: " ."))
            text = "\(capitalized(String(body[..<colon.lowerBound]))) (\(why)); trying again in \(delay)."
        } else {
            text = "\(capitalized(body)); trying again in \(delay)."
        }
        return text
    }

    private static func capitalized(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst()
    }
}
