import Foundation
import GlassesBridge
import GlassesLSL
import Synchronization

/// The run's vitals, waves and markers as Lab Streaming Layer streams (`--lsl NAME`): a stream set per device
/// (``LSLStreamPlan``), each sample stamped on liblsl's clock at its frame's capture time (``LSLClockMapping``).
///
/// liblsl is loaded when the sink opens; pushing a sample never blocks (liblsl queues it for its own threads).
// @unchecked: the outlets are fixed at init and used only from `receive`, which ``EventFanOut`` calls one event at
// a time (the ``EventSink`` contract), so no two pushes overlap; the mutable state is in a Mutex, released before
// any liblsl call.
final class LSLSink: EventSink, @unchecked Sendable {
    private let library: LSLLibrary
    /// `outlets[device][stream]`, in ``LSLStreamPlan/Stream`` order.
    private let outlets: [[LSLOutlet]]
    private let clocks: Mutex<[LSLClockMapping]>

    /// The sink when the options ask for `--lsl`, else nil.
    /// - Parameter environment: where liblsl is looked for (``LSLLibraryLocator``).
    /// - Throws: ``BridgeFailure`` (exit 69) when liblsl cannot be loaded (one line with the install hint) or a
    ///   stream cannot be opened.
    init?(options: BridgeOptions, environment: [String: String] = ProcessInfo.processInfo.environment) throws(BridgeFailure) {
        guard let name = options.lslName else { return nil }
        let library: LSLLibrary
        do {
            library = try LSLLibrary.shared(locator: LSLLibraryLocator(environment: environment))
        } catch {
            throw BridgeFailure(.deviceUnavailable, "--lsl: \(error.message)")
        }
        self.library = library
        let labels = options.deviceLabels
        var opened: [[LSLOutlet]] = []
        for (index, label) in labels.enumerated() {
            let device = options.isMultiDevice ? options.singleDevice(at: index) : options
            let context = LSLStreamPlan.Context(
                name: name, deviceLabel: label, multiDevice: labels.count > 1,
                frameRate: Self.bringsOwnRate(device) ? nil : Double(options.frameRate),
                configuration: Self.configuration(device), simulated: device.device.isSimulator, version: BridgeHelp.version
            )
            do {
                opened.append(try LSLStreamPlan.descriptions(context).map { description throws(LSLError) in
                    try LSLOutlet(description, library: library)
                })
            } catch {
                throw BridgeFailure(.deviceUnavailable, "--lsl: \(error.message).")
            }
        }
        outlets = opened
        clocks = Mutex(Array(repeating: LSLClockMapping(), count: labels.count))
    }

    /// Whether the source brings its own size and rate (a file, a network stream), so `--fps` does not apply.
    private static func bringsOwnRate(_ options: BridgeOptions) -> Bool {
        switch options.device {
        case .file, .stream: true
        case .simulator, .link, .listening: false
        }
    }

    /// The device and stream configuration a stream's `desc` carries.
    private static func configuration(_ options: BridgeOptions) -> [(String, String)] {
        var rows: [(String, String)] = [("source", options.device.description)]
        if !bringsOwnRate(options) {
            rows += [("fps", "\(options.frameRate)"), ("resolution", options.resolution.rawValue), ("codec", options.codec.rawValue)]
        }
        rows += [("pixelFormat", options.pixelFormat.rawValue), ("metrics", "\(options.metrics)")]
        return rows
    }

    func receive(_ event: BridgeEvent, device: Int, at seconds: Double) {
        guard outlets.indices.contains(device) else { return }
        let samples = LSLStreamPlan.samples(for: event, at: seconds)
        let now = library.localClock()
        let timed = clocks.withLock { clocks -> [(LSLStreamPlan.Sample, Double)] in
            clocks[device].observe(runSeconds: seconds, lslNow: now)
            return samples.compactMap { sample in
                clocks[device].time(of: sample.runSeconds, stream: sample.stream).map { (sample, $0) }
            }
        }
        for (sample, time) in timed {
            let outlet = outlets[device][sample.stream.rawValue]
            if let marker = sample.marker {
                outlet.push([marker], at: time)
            } else {
                outlet.push(sample.values, at: time)
            }
        }
    }

    /// Nothing to write: the outlets close with the process (a consumer keeps what it pulled).
    func finish() -> BridgeFailure? { nil }
}
