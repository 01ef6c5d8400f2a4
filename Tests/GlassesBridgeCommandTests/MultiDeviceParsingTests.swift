import Foundation
import GlassesBridge
@testable import GlassesBridgeCommand
import Testing

/// `--device` given several times: the devices, their labels and seeds, and the combinations refused up front.
@Suite("Several devices on the command line")
struct MultiDeviceParsingTests {
    @Test func everyDeviceIsKeptInOrderAndNamedByItsForm() throws {
        let parsed = try options(["--device", "sim", "--device", "tcp:127.0.0.1:7001", "--device", "sim"])
        #expect(parsed.devices == [.simulator, .tcp(host: "127.0.0.1", port: 7001), .simulator])
        #expect(parsed.isMultiDevice)
        #expect(parsed.deviceLabels == ["sim#1", "tcp:127.0.0.1:7001", "sim#2"])
        // One device keeps the one-device shape: no label suffix, `device` is it.
        let one = try options(["--device", "tcp:127.0.0.1:7001"])
        #expect(one.devices == [.tcp(host: "127.0.0.1", port: 7001)] && !one.isMultiDevice)
        #expect(one.deviceLabels == ["tcp:127.0.0.1:7001"])
        #expect(try options([]).devices == [.simulator])
    }

    @Test func eachSimulatorGetsItsOwnSeedAndEachDeviceRunsAlone() throws {
        let parsed = try options(["--device", "sim", "--device", "file:/tmp/a.mkv", "--device", "sim", "--sim-seed", "10"])
        let singles = parsed.devices.indices.map(parsed.singleDevice(at:))
        #expect(singles.map(\.devices) == [[.simulator], [.file(path: "/tmp/a.mkv")], [.simulator]])
        #expect(singles[0].simulator.seed == 10)
        #expect(singles[2].simulator.seed == 11)
        #expect(singles.allSatisfy { !$0.isMultiDevice })
    }

    @Test func outputsOfOneStreamAndRepeatedLinksAreRefused() {
        for flag in [["--record", "a.y4m"], ["--video-out", "a.y4m"], ["--report", "a.html"], ["--truth-out", "t.csv"]] {
            let message = usageError(["--device", "sim", "--device", "sim"] + flag)
            #expect(message?.contains(flag[0]) == true && message?.contains("2 devices") == true, "\(flag): \(message ?? "accepted")")
            // The same flag with one device is accepted.
            #expect(usageError(["--device", "sim"] + flag) == nil, "\(flag) refused with one device")
        }
        let twice = usageError(["--device", "tcp:127.0.0.1:7001", "--device", "tcp:127.0.0.1:7001"])
        #expect(twice?.contains("given twice") == true)
        #expect(usageError(["--device", "sim", "--listen", "tcp:127.0.0.1:7100"]) != nil)
    }

    @Test func linkAndSimulatorRulesLookAtEveryDevice() {
        // A remote address among several still needs a token; a simulator among them takes --sim-*.
        #expect(usageError(["--device", "sim", "--device", "tcp:10.0.0.5:7200"])?.contains("--token") == true)
        #expect(usageError(["--device", "sim", "--device", "tcp:10.0.0.5:7200", "--token", "t"]) == nil)
        #expect(usageError(["--device", "sim", "--device", "tcp:127.0.0.1:7200", "--sim-pulse", "80"]) == nil)
        #expect(usageError(["--device", "unix:/tmp/a", "--device", "tcp:127.0.0.1:7200", "--sim-pulse", "80"]) != nil)
        #expect(usageError(["--device", "sim", "--device", "sim", "--connect-timeout", "3"]) != nil)
        // --codec applies to the simulator even beside a file; with files only it is refused, as before.
        #expect(usageError(["--device", "sim", "--device", "file:/tmp/a.mkv", "--codec", "hvc1"]) == nil)
        #expect(usageError(["--device", "file:/tmp/b.mkv", "--device", "file:/tmp/a.mkv", "--codec", "hvc1"]) != nil)
    }

    @Test func theExitCodeIsZeroOnlyWhenEveryDeviceSucceededElseTheMostSevere() {
        func totals(_ codes: [BridgeExitCode]) -> BridgeExitCode {
            MultiDeviceTotals(devices: codes.enumerated().map { index, code in
                DeviceOutcome(device: "sim#\(index + 1)", summary: BridgeSummary(), exitCode: code)
            }).exitCode
        }
        #expect(totals([.success, .success, .success]) == .success)
        #expect(totals([.success, .deviceUnavailable]) == .deviceUnavailable)
        #expect(totals([.dataError, .deviceUnavailable, .success]) == .deviceUnavailable)
        #expect(totals([.deviceUnavailable, .cannotWriteOutput]) == .cannotWriteOutput)
        #expect(totals([.cannotWriteOutput, .internalError, .dataError]) == .internalError)
        #expect(totals([.success, .dataError]) == .dataError)
        let outputStopped = MultiDeviceTotals(
            devices: [DeviceOutcome(device: "sim#1", summary: BridgeSummary(), exitCode: .success)],
            runFailure: BridgeFailure(.outputFailed, "the output stopped"))
        #expect(outputStopped.exitCode == .cannotWriteOutput)
    }
}
