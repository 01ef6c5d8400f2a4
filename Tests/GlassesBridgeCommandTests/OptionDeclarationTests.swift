import CommandSupport
import Foundation
import Testing
@testable import GlassesBridgeCommand
@testable import glasses_relay
@testable import glasses_sim

/// Each command's options are declared once (``OptionTable``): the help text and the docs are held to the
/// declarations, both ways, so an option cannot be added, renamed or dropped in one place only.
@Suite("Option declarations")
struct OptionDeclarationTests {
    /// The options a help text lists: the first word of each option line (indented two spaces, starting with `--`).
    static func listed(in help: String) -> Set<String> {
        Set(help.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  --") else { return nil }
            let word = line.dropFirst(2).prefix { !" ,".contains($0) }
            return String(word)
        })
    }

    static func cliDocs() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("docs/CLI.md"), encoding: .utf8)
    }

    @Test("glasses-bridge: every declared option is in --help and docs/CLI.md, and --help lists no option the table lacks")
    func runOptionsMatchHelpAndDocs() throws {
        let declared = Set(BridgeCommand.runOptions.longNames)
        let docs = try Self.cliDocs()
        for name in declared {
            #expect(BridgeHelp.main.contains(name), "--help does not document \(name)")
            #expect(docs.contains("`\(name)"), "docs/CLI.md does not document \(name)")
        }
        let listed = Self.listed(in: BridgeHelp.main)
        #expect(listed.subtracting(declared).isEmpty, "--help lists undeclared options: \(listed.subtracting(declared).sorted())")
        #expect(declared.subtracting(listed).subtracting(["--help", "--version"]).isEmpty,
                "declared but not listed as an option line in --help: \(declared.subtracting(listed).sorted())")
    }

    @Test("glasses-bridge check and devices: the same, against their own help")
    func checkAndDevicesOptionsMatchHelp() throws {
        let check = Set(BridgeCommand.checkOptions.longNames)
        let listed = Self.listed(in: CheckHelp.text)
        #expect(listed == check, "check --help lists \(listed.sorted()), the table declares \(check.sorted())")
        for name in BridgeCommand.devicesOptions.longNames where name != "--help" {
            #expect(BridgeHelp.devices.contains(name), "devices --help does not document \(name)")
        }
    }

    @Test("glasses-bridge report: its --help lists exactly the options its table declares")
    func reportOptionsMatchHelp() throws {
        let declared = Set(BridgeCommand.reportOptions.longNames).subtracting(["--help"])
        let listed = Self.listed(in: BridgeHelp.report)
        #expect(listed == declared, "report --help lists \(listed.sorted()), the table declares \(declared.sorted())")
    }

    @Test("glasses-relay: its --help lists exactly the options its table declares")
    func relayOptionsMatchHelp() throws {
        let declared = Set(glasses_relay.Options.table.longNames)
        let listed = Self.listed(in: glasses_relay.usage)
        #expect(listed == declared, "glasses-relay --help lists \(listed.sorted()), the table declares \(declared.sorted())")
        #expect(declared.count == 13)
    }

    @Test("glasses-sim: its --help lists exactly the options its table declares")
    func simulatorOptionsMatchHelp() throws {
        let declared = Set(glasses_sim.Options.table.longNames)
        let listed = Self.listed(in: glasses_sim.usage)
        #expect(listed == declared, "glasses-sim --help lists \(listed.sorted()), the table declares \(declared.sorted())")
        #expect(declared.count == 29)
    }

    @Test("a table parses names, inline values and flags, refuses a value given to a flag, and names an unknown option")
    func tableParsing() throws {
        let table = OptionTable<[String]>([
            .setting("--flag", "-f") { seen, _ in seen.append("flag") },
            .setting("--name", argument: .value("N")) { seen, value in seen.append("name=\(value ?? "")") },
            OptionDeclaration("--stop") { _, _ in .stop },
        ])
        var seen: [String] = []
        var cursor = ArgumentCursor(["-f", "--name", "a", "--name=b", "--stop", "--unknown"])
        #expect(try table.parse(&cursor, into: &seen) { "unknown \($0)" })
        #expect(seen == ["flag", "name=a", "name=b"])
        var flagValue = ArgumentCursor(["--flag=yes"])
        #expect(throws: UsageError.self) { _ = try table.parse(&flagValue, into: &seen) { "unknown \($0)" } }
        var unknown = ArgumentCursor(["--nmae", "x"])
        do {
            _ = try table.parse(&unknown, into: &seen) { "unknown \($0)" }
            Issue.record("an unknown option was taken")
        } catch {
            #expect(error.message == "unknown --nmae")
        }
    }
}
