import GlassesMedia
import SmartSpectraCore
import VitalsEngine

/// The default processing backend: the embedded, offline vitals engine (``VitalsEngine``).
///
/// It produces pulse rate, pulse wave (`arterialPressureTrace`), HRV, breathing rate and the upper/lower breathing
/// traces; other metric types are accepted but never filled. Waveforms come with every processed frame that shows a
/// face (from the second one on); rates once a second from 10 s; HRV every 10 s from 30 s
/// (`docs/SMARTSPECTRA-ON-LINUX.md`, "Metrics cadence"). Needs the frontal-face cascade from Debian's
/// `opencv-data` package (or `VITALS_FACE_CASCADE`).
public struct EmbeddedVitalsBackend: ProcessingBackend {
    /// Sees the camera's own motion as the engine measures it on each processed frame that shows a face: the
    /// frame's timestamp (µs, the input timeline) and the background's displacement across and down (px, content
    /// moving right and down positive; nil on an axis it could not match). Called on the SDK's processing thread.
    public typealias CameraMotionObserver = @Sendable (_ timestampUs: Int64, _ across: Double?, _ down: Double?) -> Void

    private let configuration: VitalsEngineConfiguration
    private var cameraMotion: CameraMotionObserver?
    private var rotationRates: RotationRateFeed?

    /// Creates the backend with the engine's default configuration.
    public init() {
        self.configuration = VitalsEngineConfiguration()
    }

    /// Creates the backend with a specific engine configuration.
    public init(configuration: VitalsEngineConfiguration) {
        self.configuration = configuration
    }

    /// The same backend, whose runs also report the camera's motion to `observer` (what an IMU's clock is aligned
    /// with: `MotionClockAlignment`).
    public func observingCameraMotion(_ observer: @escaping CameraMotionObserver) -> EmbeddedVitalsBackend {
        var copy = self
        copy.cameraMotion = observer
        return copy
    }

    /// The same backend, whose runs give the engine the gyroscope readings added to `feed`
    /// (``VitalsEngine/addRotationRate(at:across:down:)``) and report there how its clock relates to the frames'.
    /// Give each run a feed of its own.
    public func takingRotationRates(from feed: RotationRateFeed) -> EmbeddedVitalsBackend {
        var copy = self
        copy.rotationRates = feed
        return copy
    }

    /// The backend's name.
    public var name: String { "embedded" }

    /// The metric types this backend fills.
    public var producedMetrics: Set<MetricType> { Self.filledMetrics }

    /// The metric types the embedded engine fills.
    static let filledMetrics: Set<MetricType> = [
        .pulseRate, .arterialPressureTrace, .hrv, .breathingRate, .chestBreathing, .abdomenBreathing,
    ]

    /// Starts a run; throws ``SmartSpectraError`` (`processingFailed`) when the face cascade cannot be loaded.
    public func makeProcessor(configuration processing: ProcessingConfiguration) throws -> any FrameProcessor {
        do {
            let engine = try VitalsEngine(configuration: configuration)
            return EmbeddedVitalsProcessor(engine: engine, requested: processing.requestedMetrics, cameraMotion: cameraMotion,
                                           rotationRates: rotationRates)
        } catch {
            throw SmartSpectraError(code: .processingFailed, message: "The embedded vitals engine cannot start: \(error)")
        }
    }
}

/// One run of the embedded engine: converts pixel buffers to engine views and engine samples to ``Metrics``.
///
/// Cadence: rates and HRV come from the engine on its own schedule (pulse and breathing rate once a second from
/// 10 s of face data, HRV every 10 s from 30 s); the pulse wave and the breathing traces come from
/// ``StreamingTraces``, one sample per processed frame with a face, from the second such frame on. Their
/// confidence and `stable` flag are those of the latest pulse or breathing rate (0 and false before the first).
final class EmbeddedVitalsProcessor: FrameProcessor {
    private let engine: VitalsEngine
    private let requested: Set<MetricType>
    private var lastValidation: ValidationCode?
    private var restartsSeen = 0
    private let traces = StreamingTraces()
    private var pulseConfidence = 0.0
    private var breathingConfidence = 0.0

    /// Whether any streamed waveform was asked for (otherwise the per-frame trace work is skipped).
    private var wantsTraces: Bool {
        !requested.isDisjoint(with: [.arterialPressureTrace, .chestBreathing, .abdomenBreathing])
    }

    private let cameraMotion: EmbeddedVitalsBackend.CameraMotionObserver?
    private let rotationRates: RotationRateFeed?
    private var alignmentReported: MotionClockAlignment.Estimate?

    init(engine: VitalsEngine, requested: Set<MetricType>, cameraMotion: EmbeddedVitalsBackend.CameraMotionObserver? = nil,
         rotationRates: RotationRateFeed? = nil) {
        self.engine = engine
        self.requested = requested
        self.cameraMotion = cameraMotion
        self.rotationRates = rotationRates
    }

    func process(_ frame: PixelBuffer, timestampUs: Int64) -> ProcessingUpdate {
        let format: VitalsPixelView.Format
        switch frame.format {
        case .bgra32: format = .bgra
        case .nv12VideoRange: format = .nv12VideoRange
        case .nv12FullRange: format = .nv12FullRange
        default: return ProcessingUpdate()
        }
        if let rotationRates {
            for reading in rotationRates.take() { engine.addRotationRate(at: reading.t, across: reading.across, down: reading.down) }
        }
        let output = frame.withUnsafeReadOnlyStorage { storage -> VitalsFrameResult? in
            guard let base = storage.baseAddress?.assumingMemoryBound(to: UInt8.self), let first = frame.planes.first else { return nil }
            let second = frame.planes.count > 1 ? frame.planes[1] : nil
            guard let view = try? VitalsPixelView(
                format: format, width: frame.width, height: frame.height,
                plane0: UnsafePointer(base + first.offset), bytesPerRow0: first.bytesPerRow,
                plane1: second.map { UnsafePointer(base + $0.offset) }, bytesPerRow1: second?.bytesPerRow ?? 0)
            else { return nil }
            return engine.process(view, timestampUs: timestampUs)
        }
        guard let result = output else { return ProcessingUpdate() }
        if let rotationRates, engine.motionSensorAlignment != alignmentReported {
            alignmentReported = engine.motionSensorAlignment
            rotationRates.aligned(alignmentReported)
        }
        if let cameraMotion, let measured = result.measurement, measured.backgroundHorizontal != nil || measured.background != nil {
            cameraMotion(timestampUs, measured.backgroundHorizontal, measured.background)
        }
        let trace = wantsTraces ? traces.update(result.measurement, timestampUs: timestampUs) : nil
        if let latest = result.pulseRate.last { pulseConfidence = latest.confidence }
        if let latest = result.breathingRate.last { breathingConfidence = latest.confidence }
        let code = Self.validationCode(result.condition)
        var update = ProcessingUpdate(metrics: metrics(from: result, trace: trace))
        if code != lastValidation {
            lastValidation = code
            update.validation = ValidationStatus(code: code, hint: result.condition.hint)
        }
        // A restart of the measurement (the face lost, or the input silent, for over a second) is rare and visible:
        // the verdict is re-asserted with a hint that counts it.
        if engine.restarts != restartsSeen {
            restartsSeen = engine.restarts
            update.validation = ValidationStatus(code: code, hint: Self.restartHint(restartsSeen, condition: result.condition))
        }
        return update
    }

    func finish() -> ProcessingUpdate { ProcessingUpdate() }

    /// The hint that reports the `count`th restart of the measurement in this run.
    static func restartHint(_ count: Int, condition: VitalsCondition) -> String {
        "Measurement restarted (\(count) in this run): the face was out of view or the video stopped for over a second. "
            + condition.hint
    }

    /// The validation code for an engine condition.
    static func validationCode(_ condition: VitalsCondition) -> ValidationCode {
        switch condition {
        case .ok: .ok
        case .noFaceFound: .noFaceFound
        case .multipleFacesFound: .multipleFacesFound
        case .tooDark: .tooDark
        case .tooBright: .tooBright
        case .excessiveMotion: .excessiveMotion
        case .frameRateTooLow: .frameRateTooLow
        case .faceTooClose: .faceTooClose
        case .faceTooFar: .faceTooFar
        }
    }

    /// The requested part of the engine's new rates and this frame's trace samples, or nil when there is nothing new.
    func metrics(from r: VitalsFrameResult, trace: TraceSample?) -> Metrics? {
        var metrics = Metrics()
        var cardio = Cardio()
        var breathing = Breathing()
        var hasCardio = false, hasBreathing = false
        if requested.contains(.pulseRate), !r.pulseRate.isEmpty {
            cardio.pulseRate = r.pulseRate.map {
                MeasurementWithConfidence(value: Float($0.value), stable: $0.confidence >= VitalsStability.pulse,
                                          confidence: Float($0.confidence), timestamp: $0.timestampUs)
            }
            hasCardio = true
        }
        if requested.contains(.arterialPressureTrace), let trace {
            cardio.arterialPressureTrace = [MeasurementWithConfidence(
                value: Float(trace.pulse), stable: pulseConfidence >= VitalsStability.pulse,
                confidence: Float(pulseConfidence), timestamp: trace.timestampUs)]
            hasCardio = true
        }
        if requested.contains(.hrv), !r.hrv.isEmpty {
            cardio.hrv = r.hrv.map {
                Hrv(rmssd: $0.measures.rmssd, meanNn: $0.measures.meanNN, sdnn: $0.measures.sdnn, baevsky: $0.measures.baevsky,
                    timestamp: $0.timestampUs, confidence: Float($0.confidence), stable: $0.confidence >= VitalsStability.hrv,
                    rmssdFloor: $0.measures.rmssdFloor)
            }
            hasCardio = true
        }
        if requested.contains(.breathingRate), !r.breathingRate.isEmpty {
            breathing.rate = r.breathingRate.map {
                MeasurementWithConfidence(value: Float($0.value), stable: $0.confidence >= VitalsStability.breathing,
                                          confidence: Float($0.confidence), timestamp: $0.timestampUs)
            }
            hasBreathing = true
        }
        let traceStable = breathingConfidence >= VitalsStability.breathing
        if requested.contains(.chestBreathing), let trace {
            breathing.upperTrace = [Measurement(value: Float(trace.upper), stable: traceStable, timestamp: trace.timestampUs)]
            hasBreathing = true
        }
        if requested.contains(.abdomenBreathing), let trace {
            breathing.lowerTrace = [Measurement(value: Float(trace.lower), stable: traceStable, timestamp: trace.timestampUs)]
            hasBreathing = true
        }
        if hasCardio { metrics.cardio = cardio }
        if hasBreathing { metrics.breathing = breathing }
        return hasCardio || hasBreathing ? metrics : nil
    }
}
