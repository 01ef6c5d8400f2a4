import CommandSupport
import Testing

@Suite("What both commands share: exit codes, argument walking, suggestions")
struct CommandSupportTests {
    @Test("one exit-code table with distinct, documented numbers")
    func exitCodeTable() {
        #expect(ExitCode.all.map(\.rawValue) == [0, 64, 65, 69, 70, 73])
        #expect(Set(ExitCode.all.map(\.description)).count == ExitCode.all.count)
        #expect(ExitCode.usage.description == "usage (64)")
    }

    @Test("options with inline and separate values, flags, a stray positional")
    func argumentCursor() throws {
        var cursor = ArgumentCursor(["--fps=24", "--duration", "3", "extra", "--quiet"])
        let first = try #require(try cursor.nextOption())
        #expect(first.0 == "--fps" && first.1 == "24")
        let second = try #require(try cursor.nextOption())
        #expect(try cursor.value(for: second.0, inline: second.1) == "3")
        let third = try #require(try cursor.nextOption())
        #expect(third.0 == "--quiet")
        #expect(try cursor.nextOption() == nil)
        #expect(cursor.strayPositional == "extra")

        var missing = ArgumentCursor(["--duration", "--quiet"])
        let option = try #require(try missing.nextOption())
        #expect(throws: UsageError.self) { try missing.value(for: option.0, inline: option.1) }
    }

    @Test("a close typo gets a suggestion naming the tool's help otherwise")
    func suggestions() {
        #expect(OptionSuggestion.unknownOptionMessage("--listne", known: ["--listen"], tool: "glasses-sim", command: nil)
            .contains("Did you mean '--listen'?"))
        #expect(OptionSuggestion.unknownOptionMessage("--zzzzzz", known: ["--listen"], tool: "glasses-sim", command: nil)
            .contains("See glasses-sim --help."))
    }
}
