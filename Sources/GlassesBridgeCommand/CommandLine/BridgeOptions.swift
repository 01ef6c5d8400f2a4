import GlassesBridge
import GlassesLink
import WearablesKit

/// Settings of the built-in simulator (`--sim-*`).
package struct SimulatorOptions: Sendable, Hashable {
    /// The simulated person's pulse in beats per minute (`--sim-pulse`).
    package var pulseRate: Double = 72
    /// The simulated person's breathing rate in breaths per minute (`--sim-breathing`).
    package var breathingRate: Double = 15
    /// The seed of the simulator's random choices (`--sim-seed`).
    package var seed: UInt64 = 1
    /// A scenario file the simulator plays (`--sim-scenario`).
    package var scenarioPath: String?

    /// Creates the defaults: 72 bpm, 15 breaths per minute, seed 1, no scenario.
    package init() {}
}

/// Everything a `glasses-bridge` run is told on its command line: a plain value, parsed without side effects.
package struct BridgeOptions: Sendable, Hashable {
    /// Every device of the run, in command-line order (`--device`, given once per device; default one in-process
    /// simulator). Each gets its own pipeline: session, timeline, engine, lifecycle policy and accounting.
    package var devices: [DeviceAddress] = [.simulator]
    /// The first (for a one-device run, the only) device; setting it makes the run a one-device run (`--listen`
    /// makes it ``DeviceAddress/listening(_:)``).
    package var device: DeviceAddress {
        get { devices.first ?? .simulator }
        set { devices = [newValue] }
    }
    /// The pairing token (`--token`, or `GLASSES_TOKEN` in the environment): presented when dialling a relay,
    /// required of a relay that dials in. Needed for any address that is not loopback.
    package var token: String?
    /// How long to wait for a device to connect, in seconds (`--connect-timeout`; default 10 when dialling, 60
    /// when listening). A run in which no device ever connects ends with exit 69.
    package var connectTimeout: Double?
    /// Frames per second asked of the glasses (`--fps`: 2, 7, 15, 24 or 30).
    package var frameRate: UInt = 24
    /// The streaming resolution (`--resolution`).
    package var resolution: StreamingResolution = .medium
    /// The codec the glasses stream in (`--codec`).
    package var codec: VideoCodec = .raw
    /// The layout frames are submitted in (`--pixel-format`).
    package var pixelFormat: SubmitPixelFormat = .nv12
    /// The orientation fix-up (`--transform`).
    package var transform: TransformOption = .none
    /// The metrics to measure (`--metrics`).
    package var metrics: MetricSelection = .default
    /// How long to run, in seconds of stream time (`--duration`); nil runs until interrupted or the file ends.
    package var duration: Double?
    /// Whether to ask the glasses for their IMU and report its clock against the video's (`--motion`).
    package var motion = false
    /// Whether the simulator and file playback pace frames in real time (`--realtime`/`--no-realtime`).
    package var realtime: Bool = true
    /// Simulator settings (`--sim-*`).
    package var simulator = SimulatorOptions()
    /// How much text output prints (`--quiet`, `--verbose`).
    package var verbosity: Verbosity = .normal
    /// The output format (`--format`).
    package var format: OutputFormat = .text
    /// Where output goes (`--output`); nil is standard output.
    package var outputPath: String?
    /// Where to keep what the glasses sent (`--record`).
    package var recordPath: String?
    /// Where to write the frames exactly as submitted, as Y4M (`--video-out`).
    package var videoOutPath: String?
    /// Where to write the run's HTML report when it ends (`--report`).
    package var reportPath: String?
    /// Where to write the simulator's truth on the run's clock when it ends (`--truth-out`, simulator only).
    package var truthOutPath: String?
    /// Where to serve the run's metrics for Prometheus (`--serve-metrics tcp:HOST:PORT`): loopback unless a
    /// ``token`` is given, and with a token every request must carry it as a bearer token.
    package var serveMetrics: LinkAddress?

    /// The name of the Lab Streaming Layer streams to publish (`--lsl NAME`); nil publishes none.
    package var lslName: String?
    /// A live Lab Streaming Layer heart-rate stream to compare the run with, by name or type
    /// (`--reference lsl:NAME_OR_TYPE`); nil compares with none.
    package var referenceLSL: String?

    /// Creates the defaults: simulator, 24 fps, medium, raw, NV12, breathing and cardio, real time, text.
    package init() {}

    /// Whether the run has more than one device (its output is tagged per device, `docs/CLI.md`).
    package var isMultiDevice: Bool { devices.count > 1 }

    /// How each device is named in the output, in ``devices`` order: its command-line form (`sim`,
    /// `tcp:127.0.0.1:7001`, `file:a.mkv`), with `#N` (its occurrence, from 1) when the same form is given more
    /// than once: `--device sim --device sim` is `sim#1` and `sim#2`.
    package var deviceLabels: [String] {
        let forms = devices.map(\.description)
        var seen: [String: Int] = [:]
        return forms.map { form in
            guard forms.filter({ $0 == form }).count > 1 else { return form }
            seen[form, default: 0] += 1
            return "\(form)#\(seen[form]!)"
        }
    }

    /// The options of one device of the run, as a one-device run: the device at `index`, and for the k-th simulated
    /// device (from 0) the seed `--sim-seed` + k, so that simulators given several times differ.
    package func singleDevice(at index: Int) -> BridgeOptions {
        var one = self
        one.devices = [devices[index]]
        let simulatorsBefore = devices[..<index].filter(\.isSimulator).count
        one.simulator.seed = simulator.seed &+ UInt64(simulatorsBefore)
        return one
    }

    /// The wait for a device to connect: ``connectTimeout``, or 60 s when listening (`--listen`, a stream listener) and
    /// 10 s when dialling.
    package var effectiveConnectTimeout: Duration {
        let listening = switch device {
        case .listening: true
        case .stream(let address): address.listens
        default: false
        }
        return .milliseconds(Int64(((connectTimeout ?? (listening ? 60 : 10)) * 1000).rounded()))
    }

    /// The stream configuration asked of the glasses.
    /// - Throws: ``StreamConfigurationError`` when ``frameRate`` is not one the glasses support (the parser never
    ///   lets such a value through).
    package func makeStreamConfiguration() throws(StreamConfigurationError) -> StreamConfiguration {
        try StreamConfiguration.validated(videoCodec: codec, resolution: resolution, frameRate: frameRate)
    }
}
