import GlassesBridge
import CommandSupport
import Foundation

/// Writes a ``CheckReport`` as JUnit XML, the way Jenkins, GitLab and GitHub test reporters read it: one
/// `testsuite` per plan, one `testcase` per check (`failure`, `error` or `skipped` inside), counts that match the
/// children, the run's properties, and each check's measured value and bound as its message.
package enum JUnitReport {
    /// The XML document.
    /// - Parameters:
    ///   - hostname: the machine that ran the checks.
    ///   - systemOut: per check (by ``CheckResult/fullName``), text for its `system-out` (the check's NDJSON).
    package static func xml(_ report: CheckReport, hostname: String = ProcessInfo.processInfo.hostName, systemOut: [String: String] = [:]) -> String {
        let tests = report.results.count
        let failures = report.count(.fail), errors = report.count(.error), skipped = report.count(.skipped)
        let time = seconds(report.seconds)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites name=\"glasses-bridge check\" tests=\"\(tests)\" failures=\"\(failures)\" errors=\"\(errors)\" skipped=\"\(skipped)\" time=\"\(time)\">\n"
        out += "  <testsuite name=\"\(escape(report.planName))\" tests=\"\(tests)\" failures=\"\(failures)\" errors=\"\(errors)\" skipped=\"\(skipped)\" time=\"\(time)\" timestamp=\"\(formatter.string(from: report.startedAt))\" hostname=\"\(escape(hostname))\">\n"
        if !report.properties.isEmpty {
            out += "    <properties>"
            for property in report.properties {
                out += "<property name=\"\(escape(property.name))\" value=\"\(escape(property.value))\"/>"
            }
            out += "</properties>\n"
        }
        for result in report.results {
            let head = "    <testcase classname=\"\(escape(result.group))\" name=\"\(escape(result.name))\" time=\"\(seconds(result.seconds))\""
            let details = detail(result)
            let output = systemOut[result.fullName].map { "      <system-out>\(escape($0))</system-out>\n" } ?? ""
            switch result.verdict {
            case .pass:
                out += output.isEmpty ? head + "/>\n" : head + ">\n" + output + "    </testcase>\n"
            case .fail:
                out += head + ">\n      <failure message=\"\(escape(result.message))\" type=\"\(escape(result.failureType ?? "outOfTolerance"))\">\(escape(details))</failure>\n" + output + "    </testcase>\n"
            case .error:
                out += head + ">\n      <error message=\"\(escape(result.message))\" type=\"\(escape(result.failureType ?? "error"))\">\(escape(details))</error>\n" + output + "    </testcase>\n"
            case .skipped:
                out += head + "><skipped message=\"\(escape(result.message))\"/>" + (output.isEmpty ? "" : "\n" + output + "    ") + "</testcase>\n"
            }
        }
        out += "  </testsuite>\n</testsuites>\n"
        return out
    }

    /// Writes the document to `path`.
    /// - Throws: the file system's error.
    package static func write(_ report: CheckReport, to path: String, systemOut: [String: String] = [:]) throws {
        try OutputFileWriter.write(Data(xml(report, systemOut: systemOut).utf8), to: path)
    }

    static func detail(_ result: CheckResult) -> String {
        var lines = ["check: \(result.fullName)"]
        if let measured = result.measured { lines.append("measured: \(measured)") }
        if let bound = result.bound { lines.append("bound: \(bound)") }
        if let adaptation = result.adaptation { lines.append("adaptation: \(adaptation)") }
        return lines.joined(separator: "\n")
    }

    static func seconds(_ value: Double) -> String {
        guard value.isFinite, value >= 0 else { return "0" }
        return String(format: "%.3f", value)
    }

    /// Escapes text for an XML attribute or element, and drops characters XML 1.0 cannot hold.
    package static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\n": out += "&#10;"
            case "\t": out += "&#9;"
            case "\r": out += "&#13;"
            default:
                let v = scalar.value
                let allowed = (v >= 0x20 && v <= 0xD7FF) || (v >= 0xE000 && v <= 0xFFFD) || v >= 0x10000
                if allowed { out.unicodeScalars.append(scalar) } else { out += "\u{FFFD}" }
            }
        }
        return out
    }
}
