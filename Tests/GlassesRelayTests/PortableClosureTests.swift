import Foundation
import Testing

/// The relay core and the link core must build where there is no Glibc and no BlueZ (a phone): nothing in their
/// dependency closure may import a Linux-only module, depend on a C system library, or test `canImport(Glibc)`
/// without a Darwin branch. The closure is read from Package.swift's text (no `swift package` run inside a test:
/// it would wait on the build directory's lock), and every Swift file of every target in it is scanned.
@Suite("Portable closure: no Linux-only import under GlassesRelay or GlassesLinkCore")
struct PortableClosureTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Modules that exist only on Linux (or only with BlueZ installed).
    static let linuxOnlyModules: Set<String> = ["Glibc", "Musl", "CBlueZ", "Bionic", "Android"]

    struct Target {
        var name: String
        var kind: String
        var dependencies: [String]
        var path: String
    }

    /// The targets Package.swift declares: name, kind (`target`, `systemLibrary`, …), dependencies and folder.
    static func targets() throws -> [String: Target] {
        let text = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let scalars = Array(text.unicodeScalars)
        var result: [String: Target] = [:]
        for kind in ["target", "executableTarget", "testTarget", "systemLibrary"] {
            let opener = Array(".\(kind)(".unicodeScalars)
            var index = 0
            while index + opener.count <= scalars.count {
                guard Array(scalars[index..<index + opener.count]) == opener else {
                    index += 1
                    continue
                }
                // The call's arguments, up to the matching parenthesis.
                var depth = 1
                var end = index + opener.count
                while end < scalars.count, depth > 0 {
                    if scalars[end] == "(" { depth += 1 } else if scalars[end] == ")" { depth -= 1 }
                    end += 1
                }
                let arguments = String(String.UnicodeScalarView(scalars[(index + opener.count)..<(end - 1)]))
                index = end
                guard let name = firstQuoted(after: "name:", in: arguments) else { continue }
                let dependencies = bracketed(after: "dependencies:", in: arguments).map(quotedStrings) ?? []
                let path = firstQuoted(after: "path:", in: arguments)
                // `.target(name: X, condition: …)` inside a dependency list names X again: merge what each says.
                var target = result[name]
                    ?? Target(name: name, kind: kind, dependencies: [],
                              path: kind == "testTarget" ? "Tests/\(name)" : "Sources/\(name)")
                if kind != "target" { target.kind = kind }
                target.dependencies += dependencies
                if let path { target.path = path }
                result[name] = target
            }
        }
        return result
    }

    static func firstQuoted(after label: String, in text: String) -> String? {
        guard let range = text.range(of: label) else { return nil }
        return quotedStrings(String(text[range.upperBound...])).first
    }

    static func bracketed(after label: String, in text: String) -> String? {
        guard let range = text.range(of: label), let open = text[range.upperBound...].firstIndex(of: "[") else {
            return nil
        }
        var depth = 0
        var index = open
        while index < text.endIndex {
            if text[index] == "[" { depth += 1 } else if text[index] == "]" {
                depth -= 1
                if depth == 0 { return String(text[text.index(after: open)..<index]) }
            }
            index = text.index(after: index)
        }
        return nil
    }

    static func quotedStrings(_ text: String) -> [String] {
        text.split(separator: "\"", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// `name` and every target it depends on, directly or not (products of other packages are not followed).
    static func closure(of name: String, in targets: [String: Target]) -> [Target] {
        var seen: Set<String> = []
        var order: [Target] = []
        var queue = [name]
        while let next = queue.popLast() {
            guard !seen.contains(next), let target = targets[next] else { continue }
            seen.insert(next)
            order.append(target)
            queue.append(contentsOf: target.dependencies)
        }
        return order
    }

    /// What is Linux-only in one Swift file's text, one line per finding.
    static func findings(inFile path: String, text: String) -> [String] {
        var found: [String] = []
        let hasDarwinBranch = text.contains("canImport(Darwin)")
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let code = line.trimmingCharacters(in: .whitespaces)
            let words = code.split(separator: " ").map(String.init)
            if let importIndex = words.firstIndex(of: "import"), importIndex + 1 < words.count,
               words[..<importIndex].allSatisfy({ $0.hasPrefix("@") }) {
                let module = words[importIndex + 1].split(separator: ".").first.map(String.init) ?? ""
                // A libc import is fine inside `#if canImport(Glibc)` with a Darwin branch beside it; BlueZ never is.
                if linuxOnlyModules.contains(module), module == "CBlueZ" || !hasDarwinBranch {
                    found.append("\(path):\(number + 1): \(code)")
                }
            }
            for module in linuxOnlyModules where code.hasPrefix("#") && code.contains("canImport(\(module))") {
                if !hasDarwinBranch || module == "CBlueZ" { found.append("\(path):\(number + 1): \(code) (no Darwin branch)") }
            }
            if code.hasPrefix("#") && code.contains("os(Linux)") && !code.contains("!os(Linux)") && !hasDarwinBranch
                && !text.contains("os(macOS)") && !text.contains("os(iOS)") {
                found.append("\(path):\(number + 1): \(code) (Linux only, no Darwin branch)")
            }
        }
        return found
    }

    static func check(_ module: String) throws -> (closure: [String], findings: [String]) {
        let targets = try targets()
        let closure = closure(of: module, in: targets)
        var findings: [String] = []
        for target in closure {
            if target.kind == "systemLibrary" { findings.append("\(module) depends on the C system library \(target.name)") }
            if linuxOnlyModules.contains(target.name) { findings.append("\(module) depends on \(target.name)") }
            let folder = root.appendingPathComponent(target.path)
            guard let walker = FileManager.default.enumerator(atPath: folder.path) else { continue }
            for case let relative as String in walker where relative.hasSuffix(".swift") {
                let file = folder.appendingPathComponent(relative)
                let text = try String(contentsOf: file, encoding: .utf8)
                findings += self.findings(inFile: "\(target.path)/\(relative)", text: text)
            }
        }
        return (closure.map(\.name).sorted(), findings)
    }

    @Test("GlassesRelay's closure is the portable core and its leaves, with no Linux-only import")
    func relayClosureIsPortable() throws {
        let (closure, findings) = try Self.check("GlassesRelay")
        #expect(closure.contains("GlassesLinkCore"))
        #expect(!closure.contains("GlassesLink"), "GlassesRelay must not depend on the POSIX socket layer")
        #expect(findings.isEmpty, "Linux-only in GlassesRelay's closure:\n\(findings.joined(separator: "\n"))")
    }

    @Test("GlassesLinkCore's closure has no Linux-only import")
    func linkCoreClosureIsPortable() throws {
        let (closure, findings) = try Self.check("GlassesLinkCore")
        #expect(closure.contains("WearablesKit") && closure.contains("GlassesMedia"))
        #expect(findings.isEmpty, "Linux-only in GlassesLinkCore's closure:\n\(findings.joined(separator: "\n"))")
    }

    @Test("the scan sees the socket layer's Linux-only imports (the check is not vacuous)")
    func scanFindsTheSocketLayer() throws {
        let (closure, findings) = try Self.check("GlassesLink")
        #expect(closure.contains("CBlueZ"))
        #expect(findings.contains { $0.contains("import CBlueZ") })
    }
}
