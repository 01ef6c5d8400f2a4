import SmartSpectraInput

/// What a Prometheus endpoint shows of a run: each device's counters, latency, stream state and current vitals,
/// kept from the run's events. A plain value with no I/O: the endpoint's sink holds one under a lock, takes each
/// event into it and copies it out to render a scrape.
///
/// Counters and the latency histogram are as of the device's last `stats` event (one a second) or its summary;
/// the stream state is as of its last `state` event; each vital is its last measured value, and is absent (not
/// zero) until one was measured. Every metric is named `glasses_bridge_…` and labelled with `device`, the
/// device's label in the run (`sim`, or `sim#1` and `sim#2` in a run of several).
package struct BridgeMetricsRegistry: Sendable {
    /// A vital's last measured value.
    struct Reading: Sendable, Hashable {
        /// The value, in the vital's unit.
        var value: Double
        /// The engine's confidence, 0–1.
        var confidence: Double
        /// Whether the engine calls the value stable.
        var stable: Bool
    }

    /// What one device has reported.
    struct Device: Sendable {
        var label: String
        var stats = BridgeStats()
        var phase = LifecyclePolicy.Phase.idle
        var pulse: Reading?
        var breathing: Reading?
        /// RMSSD in seconds.
        var hrv: Reading?
    }

    private var devices: [Device]

    /// Every phase a stream can be in, in the order the state gauge lists them.
    static let phases: [LifecyclePolicy.Phase] = [
        .idle, .connecting, .startingSession, .startingStream, .streaming, .paused, .waiting, .finished,
    ]

    /// A registry for the run's devices, by their labels in the run's order (one label for a run of one).
    package init(deviceLabels: [String]) {
        devices = deviceLabels.map { Device(label: $0) }
    }

    /// Takes one event of the device at index `device` (events of an unknown index are ignored).
    package mutating func take(_ event: BridgeEvent, device index: Int) {
        guard devices.indices.contains(index) else { return }
        switch event {
        case .state(let phase, _):
            devices[index].phase = phase
        case .stats(let stats, _, _, _):
            devices[index].stats = stats
        case .summary(let summary):
            devices[index].stats = summary.stats
        case .metrics(let metrics, _):
            if metrics.hasCardio, let last = metrics.cardio.pulseRate.last {
                devices[index].pulse = Reading(
                    value: Double(last.value), confidence: Double(last.confidence) / 100, stable: last.stable)
            }
            if metrics.hasCardio, let last = metrics.cardio.hrv.last {
                devices[index].hrv = Reading(
                    value: last.rmssd / 1000, confidence: Double(last.confidence) / 100, stable: last.stable)
            }
            if metrics.hasBreathing, let last = metrics.breathing.rate.last {
                devices[index].breathing = Reading(
                    value: Double(last.value), confidence: Double(last.confidence) / 100, stable: last.stable)
            }
        case .notice, .warning, .error, .validation:
            break
        }
    }

    /// The registry's metric families, in a fixed order.
    package var families: [MetricFamily] {
        typealias Label = MetricFamily.Label
        func counter(_ name: String, _ help: String, _ value: (Device) -> UInt64) -> MetricFamily {
            var family = MetricFamily("glasses_bridge_" + name, .counter, help: help)
            for device in devices { family.add(Double(value(device)), [Label("device", device.label)]) }
            return family
        }
        var families = [
            counter("frames_received", "Frames that arrived from the device.") { $0.stats.accounting.received },
            counter("frames_submitted", "Frames custom input accepted.") { $0.stats.accounting.submitted },
            counter("frames_rejected", "Frames custom input rejected.") { $0.stats.accounting.rejected },
        ]
        var dropped = MetricFamily(
            "glasses_bridge_frames_dropped", .counter, help: "Frames dropped before custom input, by reason.")
        for device in devices {
            for reason in FrameDropReason.allCases {
                dropped.add(
                    Double(device.stats.accounting.droppedByReason[reason, default: 0]),
                    [Label("device", device.label), Label("reason", reason.rawValue)])
            }
        }
        families.append(dropped)
        families += [
            counter("device_dropped_frames", "Video samples the device dropped for lack of link credit.") {
                $0.stats.deviceDroppedFrames
            },
            counter("engine_dropped_frames", "Frames the engine's queue discarded after accepting them.") {
                $0.stats.engineDroppedFrames
            },
            counter("input_restarts", "Times custom input was restarted for a fresh timeline.") {
                UInt64(max(0, $0.stats.inputRestarts))
            },
            counter("stall_restarts", "Times the watchdog restarted a stalled stream.") {
                UInt64(max(0, $0.stats.stallRestarts))
            },
            counter("reconnects", "Times the link to the device was re-established.") {
                UInt64(max(0, $0.stats.reconnects))
            },
            counter("session_restarts", "Times a session the device ended was replaced.") {
                UInt64(max(0, $0.stats.sessionRestarts))
            },
        ]
        var latency = MetricFamily(
            "glasses_bridge_frame_latency_seconds", .histogram, unit: "seconds",
            help: "Capture to accepted by custom input, per frame, for frames timed on the host's clock.")
        let bounds = LatencyBuckets.upperBoundsUs.map { Double($0) / 1_000_000 }
        for device in devices {
            guard let buckets = device.stats.latencyBuckets else { continue }
            latency.addHistogram(
                upperBounds: bounds, counts: buckets.counts, sum: Double(buckets.sumUs) / 1_000_000,
                [Label("device", device.label)])
        }
        families.append(latency)
        var state = MetricFamily(
            "glasses_bridge_stream_state", .gauge, help: "The stream's lifecycle phase: 1 for the current one, else 0.")
        for device in devices {
            for phase in Self.phases {
                state.add(device.phase == phase ? 1 : 0, [Label("device", device.label), Label("state", phase.rawValue)])
            }
        }
        families.append(state)
        families += vitalFamilies(
            "pulse", unit: "beats_per_minute", what: "Pulse rate, beats per minute", reading: \.pulse)
        families += vitalFamilies(
            "breathing", unit: "breaths_per_minute", what: "Breathing rate, breaths per minute", reading: \.breathing)
        families += vitalFamilies(
            "hrv_rmssd", unit: "seconds", what: "Heart-rate variability (RMSSD), seconds", reading: \.hrv)
        return families
    }

    private func vitalFamilies(
        _ name: String, unit: String, what: String, reading: KeyPath<Device, Reading?>
    ) -> [MetricFamily] {
        let prefix = "glasses_bridge_" + name
        var value = MetricFamily(prefix + "_" + unit, .gauge, unit: unit, help: "\(what), as last measured.")
        var confidence = MetricFamily(
            prefix + "_confidence_ratio", .gauge, unit: "ratio", help: "The engine's confidence in the last value, 0 to 1.")
        var stable = MetricFamily(prefix + "_stable", .gauge, help: "1 when the engine calls the last value stable, else 0.")
        for device in devices {
            guard let last = device[keyPath: reading] else { continue }
            let labels = [MetricFamily.Label("device", device.label)]
            value.add(last.value, labels)
            confidence.add(last.confidence, labels)
            stable.add(last.stable ? 1 : 0, labels)
        }
        return [value, confidence, stable]
    }

    /// The exposition of the registry in `format`.
    package func render(_ format: ExpositionFormat) -> String {
        MetricsExposition.render(families, format: format)
    }
}
