import Foundation

// Colour traces: the skin's colour on a uniform grid with the motion echo removed, and the background's chroma
// noise: what the pulse estimators and HRV both start from.
extension VitalsEngine {
    /// The sampling rate the traces are resampled to: the input rate rounded, at most 30 Hz.
    var analysisRate: Double {
        guard frameTimes.count >= 3, let first = frameTimes.first, let last = frameTimes.last, last > first else { return 30 }
        return min(30, max(8, (Double(frameTimes.count - 1) / (last - first)).rounded()))
    }

    /// What the pulse estimators and HRV start from over one window: the skin's colour on a uniform grid, and how
    /// much noisier the video's chroma is than its luma (``chromaExcess(background:rate:low:high:)``).
    struct ColourTraces {
        var r: [Double], g: [Double], b: [Double]
        var chromaExcess: Double
        /// The background's red, green and blue on the same grid, motion removed; nil when too few frames had one.
        var background: [[Double]]?
        /// The motion signals on the same grid: the picture's (``VitalsEngine/echoSignals(_:)``), then the IMU's, if any.
        var motion: [[Double]]
        /// The skin's luma before and right after the motion removal (what ``echoLeft(_:rate:)`` compares).
        var lumaBeforeMotionRemoval: [Double], lumaAfterMotionRemoval: [Double]
    }

    /// The skin's colour over `window` on a uniform grid at `rate`, cleaned in the pulse band: the face's motion
    /// echo removed, and, when the background shows the video's chroma noisier than its luma (a codec short of
    /// bits), what the skin shares with the background's colour removed as well.
    ///
    /// The background beside the head carries no pulse, so a rhythm it shares with the skin is the video's: after
    /// HEVC at 2 Mbit/s the chroma of the whole picture steps with the codec's refresh (1 s at the glasses' GOP),
    /// which POS and CHROM otherwise read as a 60 bpm pulse. In uncompressed video (ratio ≤ 0.5) the background is
    /// left out: there it only adds its own noise and the shading a moving camera slides through it.
    ///
    /// With `fit` (samples ending where the window ends and reaching further back), how the skin follows the face's
    /// motion is fitted over `fit` and removed from the window (see ``motionFitSpan``).
    func skinTrace(_ window: [Sample], from start: Double, to end: Double, rate fs: Double, fit: [Sample]? = nil) -> ColourTraces {
        let trace = Self.colourTrace(window, from: start, to: end, rate: fs)
        let count = trace.r.count
        let band = pulseBand(rate: fs)
        // The IMU, when the engine has one: its rotation beside the picture's own motion, and its spans of strong
        // rotation left out (bridged) of every signal, in the window and in the longer fit alike, or in neither (the
        // coupling's signals are the window's, by index).
        var longFit: (samples: [Sample], start: Double)?
        if let fit, let first = fit.first, fit.count > window.count { longFit = (fit, first.t) }
        var sensor = motionSensorTrace(from: start, rate: fs, count: count)
        var longSensor: (signals: [[Double]], strong: [Bool])?
        if let longFit {
            longSensor = motionSensorTrace(from: longFit.start, rate: fs, count: Int((end - longFit.start) * fs) + 1)
            if longSensor == nil { sensor = nil } else if sensor == nil { longSensor = nil }
        }
        let gaps = sensor?.strong ?? []
        let keepBelow = sensor.map { nodCutoff($0.signals, rate: fs, skin: [trace.r, trace.g, trace.b], gaps: gaps) } ?? 0
        let motion = (Self.echoSignals(Self.motionTrace(window, from: start, rate: fs, count: count)) + (sensor?.signals ?? []))
            .map { Self.bridged($0, over: gaps, keepingBelow: keepBelow, rate: fs) }
        let raw = [trace.r, trace.g, trace.b].map { Self.bridged($0, over: gaps, keepingBelow: keepBelow, rate: fs) }
        // How the skin follows the motion is fitted over `fit` when it is longer than the window (see
        // motionFitSpan), and removed from the window.
        var coupling: MotionCoupling?
        if let longFit {
            let fit = longFit.samples, fitStart = longFit.start
            let long = Self.colourTrace(fit, from: fitStart, to: end, rate: fs)
            let longGaps = longSensor?.strong ?? []
            let longMotion = (Self.echoSignals(Self.motionTrace(fit, from: fitStart, rate: fs, count: long.r.count)) + (longSensor?.signals ?? []))
                .map { Self.bridged($0, over: longGaps, keepingBelow: keepBelow, rate: fs) }
            coupling = Self.motionCoupling([long.r, long.g, long.b].map { Self.bridged($0, over: longGaps, keepingBelow: keepBelow, rate: fs) }, motion: longMotion,
                                           rate: fs, low: band.low, high: band.high,
                                           leaving: Self.curvatureLeft(longMotion, span: end - fitStart, rate: fs, low: band.low, high: band.high),
                                           earning: Self.sensorSignals(in: longMotion))
        } else {
            // Fitted over the window alone (the pulse's first seconds, HRV): without the lag's squares.
            coupling = Self.motionCoupling(raw, motion: motion, rate: fs, low: band.low, high: band.high, leaving: Self.curvatureSignals,
                                           earning: Self.sensorSignals(in: motion))
        }
        var skin = Self.removeMotion(raw, motion: motion, coupling: coupling)
        let lumaAfterMotionRemoval = Self.chroma(of: skin).y
        var excess = 0.0
        let background = backgroundTrace(window, from: start, rate: fs, count: count).map { $0.map { Self.bridged($0, over: gaps, keepingBelow: keepBelow, rate: fs) } }
        if let background {
            excess = Self.chromaExcess(background: background, rate: fs, low: band.low, high: band.high)
            if excess > PulseAnalysis.chromaTolerance {
                skin = Self.removeMotion(skin, motion: background, rate: fs, low: band.low, high: band.high)
            }
        }
        return ColourTraces(r: skin[0], g: skin[1], b: skin[2], chromaExcess: excess, background: background, motion: motion,
                            lumaBeforeMotionRemoval: Self.chroma(of: raw).y, lumaAfterMotionRemoval: lumaAfterMotionRemoval)
    }

    /// The frequency (Hz) below which the spans of strong rotation in `gaps` are kept in every signal
    /// (``bridged(_:over:keepingBelow:rate:)``), or 0 to leave them out whole: ``nodKeptShare`` of the frequency at
    /// which the IMU's rotation rates (`signals` 2 and 3 of ``motionSensorTrace(from:rate:count:)``) have the most
    /// power in the pulse band (the nod's rate), when that is above the band's floor and the spans hold there no more
    /// than ``nodSpanPower`` times the power per sample of the rest of the skin's luma (`skin`: red, green, blue).
    func nodCutoff(_ signals: [[Double]], rate fs: Double, skin: [[Double]], gaps: [Bool]) -> Double {
        guard signals.count >= 4, gaps.contains(true), gaps.contains(false) else { return 0 }
        let across = bandSpectrum(signals[2], rate: fs), down = bandSpectrum(signals[3], rate: fs)
        guard across.power.count == down.power.count,
              let peak = zip(across.power, down.power).map(+).enumerated().max(by: { $0.element < $1.element })?.offset
        else { return 0 }
        let cutoff = Self.nodKeptShare * across.frequencies[peak]
        let band = pulseBand(rate: fs)
        guard cutoff > band.low, skin.count == 3, skin[0].count == gaps.count else { return 0 }
        // What the spans hold below the cutoff, against what the rest of the window holds there: a pulse carries on
        // through a nod at its own strength; the nod's echo (the face's regions placed again) is much stronger.
        let below = SignalMath.bandPass(Self.chroma(of: skin).y, sampleRate: fs, low: band.low, high: cutoff)
        var inSpans = 0.0, outside = 0.0, spanCount = 0
        for (v, gap) in zip(below, gaps) {
            if gap { inSpans += v * v; spanCount += 1 } else { outside += v * v }
        }
        let ratio = (inSpans / Double(spanCount)) / max(1e-12, outside / Double(gaps.count - spanCount))
        return ratio <= Self.nodSpanPower ? cutoff : 0
    }

    /// How much noisier than its luma the pulse estimators take the video's chroma to be over `trace`'s window: the
    /// background's measure (``ColourTraces/chromaExcess``), but at least ``compressedChromaExcess`` once the
    /// background shows the video's own lines (``videoLines``: a codec's refresh).
    ///
    /// The background's measure compares its chroma with its luma, and a shaking camera in dim light raises the
    /// luma's variation as much as the codec's starved chroma raises the chroma's: after HEVC at 2 Mbit/s with
    /// 3 px of shake and light at 0.7 it reads 0.4–0.5, the level of uncompressed video, while POS, CHROM and GREEN
    /// read a different rhythm each window and LUMA holds the pulse. A line in the background's chroma that
    /// persists window after window is the codec's own evidence, whatever the luma does.
    func chromaExcess(of trace: ColourTraces) -> Double {
        videoLines.lines.isEmpty ? trace.chromaExcess : max(trace.chromaExcess, Self.compressedChromaExcess)
    }

    /// Seconds of samples the pulse's motion removal fits the skin's coupling to the face's motion over, though the
    /// pulse is read from the last `pulseWindow` (12 s) alone.
    ///
    /// Least squares over one 12 s window cannot tell a pulse from a line of the camera's motion within about 5 bpm
    /// of it: over 12 s a 56 bpm pulse and a 54 bpm shake are three quarters correlated, and the fit takes that much
    /// of the pulse as echo. Over 30 s they are a tenth correlated. How the skin's colour follows the motion
    /// (shading, the regions' edges) belongs to the face and the light and changes slowly, so the longer fit loses
    /// little, as long as the skin regions stay where they are (``motionFitSamples(at:)``). Measured on the shaken
    /// real-photograph clips (docs/VITALS-ENGINE.md, *A longer look at the motion*): uncompressed from 75 px 16/18 →
    /// 17/18 within 3 bpm, after HEVC 14/18 → 15/18; the simulator's moving subjects 1.30 → 1.19 bpm over 65 s.
    static let motionFitSpan = 30.0

    /// The samples the pulse's motion removal fits its coupling over at `t`: the last ``motionFitSpan`` seconds, but
    /// none from before the face box last changed (``lastBoxChange``). New skin regions lie on other pixels and
    /// follow the motion differently: a fit across the change left a shake's echo at 54 bpm that read as the pulse,
    /// at full confidence, on a simulated subject whose detected box jumped between 225 and 300 px.
    func motionFitSamples(at t: Double) -> [Sample] {
        Array(samples.drop { t - $0.t > Self.motionFitSpan || $0.t < lastBoxChange })
    }

    /// The least chroma excess taken for video that shows its own lines: the low end of what HEVC at 2 Mbit/s
    /// measures on a still background (1–3), twice ``PulseAnalysis/chromaTolerance``, so chroma is marked down by
    /// 6 dB.
    static let compressedChromaExcess = 1.0

    /// Per bin of the pulse band's grid, the share of the skin luma's power the motion removal left in `trace`:
    /// near 0 where the trace was mostly the motion's echo, near 1 where the motion explained nothing. The echo
    /// removed is the motion's alone: the background's share is taken out after it.
    func echoLeft(_ trace: ColourTraces, rate fs: Double) -> [Double] {
        let (before, after) = removalSpectra(trace, rate: fs)
        return zip(before.power, after.power).map { $0 > 0 ? $1 / $0 : 1 }
    }

    /// The skin luma's band spectra before and right after the motion removal in `trace` (one grid).
    private func removalSpectra(_ trace: ColourTraces, rate fs: Double) -> (before: BandSpectrum, after: BandSpectrum) {
        (bandSpectrum(trace.lumaBeforeMotionRemoval, rate: fs), bandSpectrum(trace.lumaAfterMotionRemoval, rate: fs))
    }

    /// The share of the skin luma's power within the pulse line's half width of `frequency` (Hz) that the motion
    /// removal left in `trace` (1 when there was none to begin with).
    func echoLeft(_ trace: ColourTraces, at frequency: Double, rate fs: Double) -> Double {
        let reach = Self.pulseLineHalfWidth(at: frequency)
        func power(_ spectrum: BandSpectrum) -> Double {
            zip(spectrum.frequencies, spectrum.power).reduce(0) { abs($1.0 - frequency) <= reach ? $0 + $1.1 : $0 }
        }
        let spectra = removalSpectra(trace, rate: fs)
        let before = power(spectra.before)
        return before > 0 ? power(spectra.after) / before : 1
    }

    /// Updates ``videoLines`` from the background's chroma in `trace` and ``motionLines`` from the face's position
    /// (see ``SpectralLineFinder``); a window without a background leaves the video's lines as they were.
    func findLines(in trace: ColourTraces, rate fs: Double) {
        if trace.motion.count >= 2 { motionLines.update(bandSpectrum(trace.motion[0], rate: fs), bandSpectrum(trace.motion[1], rate: fs)) }
        // The IMU's displacement follows the picture's six signals (``motionSensorTrace(from:rate:count:)``).
        if trace.motion.count >= Self.pictureMotionSignals + 2 {
            let across = trace.motion[Self.pictureMotionSignals], down = trace.motion[Self.pictureMotionSignals + 1]
            sensorLines.update(bandSpectrum(across, rate: fs), bandSpectrum(down, rate: fs))
            let band = pulseBand(rate: fs)
            sensorMotionLevel = [across, down].map {
                SignalMath.standardDeviation(SignalMath.bandPass($0, sampleRate: fs, low: band.low, high: band.high))
            }.max() ?? 0
        } else {
            sensorMotionLevel = 0
        }
        guard let background = trace.background else { return }
        let chroma = Self.chroma(of: background)
        videoLines.update(bandSpectrum(chroma.cb, rate: fs), bandSpectrum(chroma.cr, rate: fs))
    }

    /// The mask for every method's spectrum: 0 on a line of the camera's motion (``motionLines``) where the motion
    /// removal took out more than half of the skin luma's power (``echoLeft(_:rate:)`` below ``echoShare``), 1
    /// elsewhere; empty before the motion's lines are known, and in video that shows none of its own lines
    /// (``videoLines``: a codec's refresh).
    ///
    /// After HEVC with dim light the removal leaves an echo of a steady shake that still outweighs a weak pulse, so
    /// the line is kept out. Where the removal took out less, the skin's power there is mostly its own: a pulse
    /// that happens to share a frequency with the motion (a simulated head rising with each breath has lines at the
    /// breathing's harmonics) is kept. In uncompressed video the removal leaves little echo, but a pulse that sits
    /// on the motion's line loses part of itself to the removal, and the mask then hid the pulse itself (the
    /// simulator's `raw-motion` subjects at 63.5 and 66.8 bpm, next to its 66 bpm line, read their harmonic):
    /// there nothing is masked.
    func echoMask(_ trace: ColourTraces, rate fs: Double) -> [Double] {
        let lines = motionLines.mask
        // No line, no mask (an empty mask leaves the spectra as they are), and no spectra to compute.
        guard lines.contains(0), !videoLines.lines.isEmpty else { return [] }
        return Self.echoMask(lines: lines, echoLeft: echoLeft(trace, rate: fs))
    }

    /// 0 where `lines` is 0 and `echoLeft` is below ``echoShare``, 1 elsewhere; empty when the grids differ.
    static func echoMask(lines: [Double], echoLeft: [Double]) -> [Double] {
        guard lines.count == echoLeft.count else { return [] }
        return zip(lines, echoLeft).map { $0 == 0 && $1 < echoShare ? 0 : 1 }
    }

    /// The share of a bin's skin luma power the motion removal must have taken out for a motion line there to be
    /// masked (see ``echoMask(_:rate:)``): 0.5 kept the simulator's moving subjects unchanged; 1 lost some of them.
    static let echoShare = 0.5

    /// How many motion signals each sample records (`Sample.motion`).
    static let recordedMotionSignals = 6
    /// How many of the colour traces' motion signals come from the picture (``echoSignals(_:)``); the IMU's, when
    /// there is one, follow them.
    static let pictureMotionSignals = recordedMotionSignals + 3

    /// The picture's motion signals the skin's colour echo is fitted to: the ones each sample records
    /// (`Sample.motion`), then the square of the skin regions' lag across (signal 2), the square of their lag down
    /// (signal 3) and the product of the two: ``pictureMotionSignals`` of them (signals that are not the recorded
    /// six come back as they are).
    ///
    /// The skin's colour is a smooth function of where its regions sit on the face: to first order it follows the
    /// lag, which the linear fit takes out. When the lag also swings slowly over the fit, as with a wearer whose
    /// head drifts the view by several pixels, the curvature of the face's shading multiplies the slow swing with
    /// the fast rhythms and puts lines at their sums and differences, which a linear fit leaves. In the simulator's
    /// drift (rhythms at 54 and 66 bpm, sway at 0.1–0.4 Hz) those fall at 46–88 bpm, where a weak pulse after a
    /// starved codec lost to them (`docs/VITALS-ENGINE.md`, *The lag's curvature*). The squares are fitted only
    /// where they can matter (``curvatureLeft(_:span:rate:low:high:)``).
    static func echoSignals(_ recorded: [[Double]]) -> [[Double]] {
        guard recorded.count == recordedMotionSignals else { return recorded }
        let across = recorded[2], down = recorded[3]
        return recorded + [zip(across, across).map(*), zip(down, down).map(*), zip(across, down).map(*)]
    }

    /// The least pulse-band motion of the skin regions' lag (band-passed σ, px, the larger axis) over a fit for the
    /// lag's squares to be fitted (``echoSignals(_:)``). A drift of 8 px at 504 px across moves the lag by
    /// 0.4–0.6 px in the band, a 3 px shake by 0.2–0.3: there three more signals took more of the pulse than the
    /// curvature's echo they explained (the shaken real-photograph clips after HEVC, sample MAE 8.3 → 13.6 bpm).
    static let curvatureLag = 0.3
    /// The most pulse-band motion of the face itself (band-passed σ of its tracked position, px, the larger axis)
    /// for the lag's squares to be fitted. The squares stand for the shading under regions that stay on one part of
    /// the face; a face moving by several pixels within a beat (the simulator's nod: 4–6 px, against 0.9 for an
    /// 8 px drift) has its regions placed again and again, and the squares follow the placements: they
    /// cost a nodding subject its value (the simulator's `hvc1-1M-nod`, 6/6 → 5/6 within 3 bpm).
    static let curvatureFaceMotion = 2.0
    /// The least span of a fit, seconds, for the lag's squares to be fitted: over a shorter one three more signals
    /// lean on the pulse (a clip of a 93.8 bpm pulse drifting at 1 Mbit/s, fitted over its first 13 s, read the
    /// rest of a motion line, 42.9 bpm, as stable).
    static let curvatureSpan = 20.0

    /// The indices of the IMU's signals among `motion` (``echoSignals(_:)``'s, then the IMU's).
    static func sensorSignals(in motion: [[Double]]) -> Set<Int> {
        Set(min(pictureMotionSignals, motion.count) ..< motion.count)
    }

    /// The indices of the lag's squares among the motion signals (``echoSignals(_:)``).
    static let curvatureSignals = Set(recordedMotionSignals ..< pictureMotionSignals)

    /// The signals of `motion` (``echoSignals(_:)``'s, then any others) the pulse's fit over `span` seconds leaves
    /// out: the lag's squares, unless the fit is at least ``curvatureSpan`` long, the lag moves by at least
    /// ``curvatureLag`` in the band `low`–`high` Hz and the face by at most ``curvatureFaceMotion``.
    ///
    /// Only the pulse's longer fit (``motionFitSpan``) takes them. A trace fitted over its own window, as HRV's
    /// are, leaves them out: on the simulator's `raw-motion` subjects they raised the 40 s RMSSD error from 13.0 to
    /// 17.0 ms while the pulse's rate moved by 0.02 bpm.
    static func curvatureLeft(_ motion: [[Double]], span: Double, rate: Double, low: Double, high: Double) -> Set<Int> {
        let squares = curvatureSignals
        guard motion.count >= pictureMotionSignals, span >= curvatureSpan else { return squares }
        func inBand(_ k: Int) -> Double {
            SignalMath.standardDeviation(SignalMath.bandPass(motion[k], sampleRate: rate, low: low, high: high))
        }
        guard max(inBand(0), inBand(1)) <= curvatureFaceMotion else { return squares }
        return max(inBand(2), inBand(3)) >= curvatureLag ? [] : squares
    }

    /// The band spectrum of `x` on the pulse band's grid (band-passed first).
    private func bandSpectrum(_ x: [Double], rate fs: Double) -> BandSpectrum {
        let band = pulseBand(rate: fs)
        return BandSpectrum(SignalMath.bandPass(x, sampleRate: fs, low: band.low, high: band.high), rate: fs, low: band.low,
                            high: band.high, step: PulseAnalysis.spectrumStep)
    }

    /// BT.601 luma and the chroma differences scaled to luma's units, per sample, of red, green and blue channels.
    static func chroma(of channels: [[Double]]) -> (y: [Double], cb: [Double], cr: [Double]) {
        let colours = (0 ..< channels[0].count).map { RGB(r: channels[0][$0], g: channels[1][$0], b: channels[2][$0]) }
        return (colours.map(\.luma), colours.map { ($0.b - $0.luma) / 1.772 }, colours.map { ($0.r - $0.luma) / 1.402 })
    }

    /// The pulse range in Hz, its top kept below the Nyquist frequency of `rate`.
    private func pulseBand(rate fs: Double) -> (low: Double, high: Double) {
        (configuration.pulseRange.lowerBound / 60, min(configuration.pulseRange.upperBound / 60, fs / 2 - 0.1))
    }

    /// The background's red, green and blue over `window` on the skin trace's grid, with what the face's motion
    /// explains removed in the pulse band (a shaking camera slides a textured background under its regions, which
    /// moves its luma far more than its chroma); nil when fewer than 3/4 of the samples have a background.
    private func backgroundTrace(_ window: [Sample], from start: Double, rate fs: Double, count: Int) -> [[Double]]? {
        let valid = window.filter { $0.backgroundRGB != nil }
        guard valid.count * 4 >= window.count * 3, valid.count > Int(4 * fs) else { return nil }
        let times = valid.map(\.t)
        let colours = valid.map { $0.backgroundRGB! }
        let channels = [colours.map(\.r), colours.map(\.g), colours.map(\.b)].map {
            SignalMath.resample(times: times, values: $0, start: start, rate: fs, count: count)
        }
        let band = pulseBand(rate: fs)
        return Self.removeMotion(channels, motion: Self.motionTrace(valid, from: start, rate: fs, count: count), rate: fs,
                                 low: band.low, high: band.high)
    }

    /// How much more the video's chroma varies than its luma in a still background, between `low` and `high` Hz
    /// (see ``chromaExcess(background:rate:low:high:)``), from samples at `times`, resampled at `rate` over
    /// `start`…`end`. 0 when there is too little to judge by.
    static func chromaExcess(times: [Double], colours: [RGB], from start: Double, to end: Double, rate: Double,
                             low: Double, high: Double) -> Double {
        guard times.count == colours.count, times.count > Int(4 * rate), end > start else { return 0 }
        let count = Int((end - start) * rate) + 1
        let channels = [colours.map(\.r), colours.map(\.g), colours.map(\.b)].map {
            SignalMath.resample(times: times, values: $0, start: start, rate: rate, count: count)
        }
        return chromaExcess(background: channels, rate: rate, low: low, high: high)
    }

    /// How much more the video's chroma varies than its luma in the background's red, green and blue (uniformly
    /// sampled at `rate`), between `low` and `high` Hz: the band-passed standard deviation of the worse of Cb and Cr
    /// over that of Y (BT.601 scaling, so the units match). 0 when the background does not vary at all.
    ///
    /// A camera's own noise and changing light move luma at least as much as chroma (uncompressed video measures
    /// 0.1–0.5); a codec starved of bits spends little on chroma, which then steps with its refresh rhythm (HEVC at
    /// 2 Mbit/s measures 1–3). The pulse estimators mark down the methods that read chroma by this ratio.
    static func chromaExcess(background channels: [[Double]], rate: Double, low: Double, high: Double) -> Double {
        guard channels.count == 3, !channels[0].isEmpty else { return 0 }
        let chroma = chroma(of: channels)
        func spread(_ x: [Double]) -> Double {
            SignalMath.standardDeviation(SignalMath.bandPass(x, sampleRate: rate, low: low, high: high))
        }
        let y = spread(chroma.y)
        let cb = spread(chroma.cb), cr = spread(chroma.cr)
        guard y > 1e-9 else { return 0 }
        return max(cb, cr) / y
    }

    /// The skin's mean red, green and blue, resampled onto a uniform grid from `start` through `end` at `rate`.
    private static func colourTrace(_ window: [Sample], from start: Double, to end: Double, rate: Double) -> (r: [Double], g: [Double], b: [Double]) {
        let count = Int((end - start) * rate) + 1
        let times = window.map(\.t)
        return (SignalMath.resample(times: times, values: window.map(\.rgb.r), start: start, rate: rate, count: count),
                SignalMath.resample(times: times, values: window.map(\.rgb.g), start: start, rate: rate, count: count),
                SignalMath.resample(times: times, values: window.map(\.rgb.b), start: start, rate: rate, count: count))
    }

    /// The motion signals of `window` on the colour trace's grid (see `Sample.motion`): as many as every sample has.
    private static func motionTrace(_ window: [Sample], from start: Double, rate: Double, count: Int) -> [[Double]] {
        let times = window.map(\.t)
        return (0 ..< (window.map(\.motion.count).min() ?? 0)).map { k in
            SignalMath.resample(times: times, values: window.map { $0.motion[k] }, start: start, rate: rate, count: count)
        }
    }

    /// Removes from each channel what the motion signals explain in the pulse band `low`–`high` Hz (least squares
    /// on the band-passed signals), so that shading sliding through the skin regions does not read as pulse.
    /// Signals that barely move (band-passed σ ≤ 0.02, px or colour levels) are left out. Any reference that carries
    /// no pulse serves as `motion`: `skinTrace` also passes the background's colour.
    static func removeMotion(_ channels: [[Double]], motion: [[Double]], rate: Double, low: Double, high: Double) -> [[Double]] {
        removeMotion(channels, motion: motion, coupling: motionCoupling(channels, motion: motion, rate: rate, low: low, high: high))
    }

    /// How each channel follows the motion signals: which signals move enough to use, and per channel their
    /// least-squares coefficients in the pulse band (nil for a channel whose fit is singular).
    struct MotionCoupling {
        var used: [Int]
        var beta: [[Double]?]
    }

    /// The coupling of `channels` to `motion` (same grid) in the pulse band `low`–`high` Hz, leaving out the signals
    /// whose indices are in `leaving`; nil when no signal moves.
    ///
    /// The signals in `earning` (the IMU's) stay only when they earn their place: when, beside the others, they
    /// explain more of the channels' band power than chance would (``earnedFit``).
    static func motionCoupling(_ channels: [[Double]], motion: [[Double]], rate: Double, low: Double, high: Double,
                               leaving: Set<Int> = [], earning: Set<Int> = []) -> MotionCoupling? {
        let count = channels.first?.count ?? 0
        let bands = motion.enumerated().map { k, signal in
            signal.count == count && !leaving.contains(k) ? SignalMath.bandPass(signal, sampleRate: rate, low: low, high: high) : []
        }
        let moving = bands.indices.filter { !bands[$0].isEmpty && SignalMath.standardDeviation(bands[$0]) > 0.02 }
        let targets = channels.map { SignalMath.bandPass($0, sampleRate: rate, low: low, high: high) }
        func dot(_ a: [Double], _ b: [Double]) -> Double { zip(a, b).reduce(0) { $0 + $1.0 * $1.1 } }
        func fit(_ used: [Int]) -> (coupling: MotionCoupling, residual: Double)? {
            guard !used.isEmpty else { return nil }
            let regressors = used.map { bands[$0] }
            let n = regressors.count
            var gram = [[Double]](repeating: [Double](repeating: 0, count: n), count: n)
            for i in 0 ..< n { for j in 0 ..< n { gram[i][j] = dot(regressors[i], regressors[j]) } }
            for i in 0 ..< n { gram[i][i] *= 1.001 }   // a touch of ridge for nearly collinear motion
            var residual = 0.0
            let beta = targets.map { y -> [Double]? in
                // A channel the fit cannot solve for keeps all of its power.
                guard let beta = SignalMath.solve(gram, regressors.map { dot($0, y) }) else { residual += dot(y, y); return nil }
                var left = y
                for (k, x) in regressors.enumerated() { for i in left.indices { left[i] -= beta[k] * x[i] } }
                residual += dot(left, left)
                return beta
            }
            return (MotionCoupling(used: used, beta: beta), residual)
        }
        guard let whole = fit(moving) else { return nil }
        let extra = moving.filter { earning.contains($0) }
        guard !extra.isEmpty else { return whole.coupling }
        let base = moving.filter { !earning.contains($0) }
        let without = fit(base)
        let residualWithout = without?.residual ?? targets.reduce(0) { $0 + dot($1, $1) }
        // Samples' worth of independent values a band-passed trace holds: twice the band's width per second.
        let freedom = Double(count) * 2 * (high - low) / rate - Double(moving.count)
        guard freedom > 0, whole.residual > 0 else { return whole.coupling }
        let f = ((residualWithout - whole.residual) / Double(extra.count)) / (whole.residual / freedom)
        return f >= earnedFit ? whole.coupling : without?.coupling
    }

    /// The F statistic the IMU's signals must reach beside the picture's to join the motion fit: the power they
    /// explain, per signal, over the residual's per degree of freedom (about 1 by chance; 4 is reached by chance
    /// about once in two hundred fits of four signals over a 30 s fit's 130 or so degrees of freedom, at 40–180 bpm).
    static let earnedFit = 4.0

    /// Removes `coupling` times the motion (mean removed) from each channel, at every frequency: the fit is on the
    /// band-passed signals, the removal with the whole motion, so the echo goes wherever the filter would have only
    /// partly passed it.
    static func removeMotion(_ channels: [[Double]], motion: [[Double]], coupling: MotionCoupling?) -> [[Double]] {
        guard let coupling, coupling.beta.count == channels.count else { return channels }
        let count = channels.first?.count ?? 0
        guard coupling.used.allSatisfy({ motion.indices.contains($0) && motion[$0].count == count }) else { return channels }
        let whole = coupling.used.map { k in
            let mean = SignalMath.mean(motion[k])
            return motion[k].map { $0 - mean }
        }
        return zip(channels, coupling.beta).map { channel, beta in
            guard let beta else { return channel }
            var out = channel
            for k in whole.indices { for i in 0 ..< count { out[i] -= beta[k] * whole[k][i] } }
            return out
        }
    }
}
