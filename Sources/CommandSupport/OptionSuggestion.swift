/// "Did you mean" for mistyped options, shared by both commands.
public enum OptionSuggestion {
    /// The message for an unknown option: a close match if there is one, else a pointer to `--help`.
    public static func unknownOptionMessage(_ name: String, known: [String], tool: String, command: String?) -> String {
        let context = command.map { " for \($0)" } ?? ""
        let suggestion = known.min { editDistance($0, name) < editDistance($1, name) }
        if let suggestion, editDistance(suggestion, name) <= max(2, name.count / 3) {
            return "unknown option '\(name)'\(context). Did you mean '\(suggestion)'?"
        }
        return "unknown option '\(name)'\(context). See \(tool) \(command.map { "\($0) " } ?? "")--help."
    }

    /// Levenshtein distance, for "did you mean" suggestions.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
