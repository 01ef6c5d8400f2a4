import Foundation
import Testing
@testable import VitalsEngine

/// The search for a face while none is tracked (``FaceScout``): found within half a second of entering the view,
/// bounded per frame, and free where nothing changes. Work is counted in detector windows, not timed.
@Suite("Looking for a face on a budget", .serialized)
struct FaceSearchBudgetTests {
    /// A picture held as BGRA bytes, ready to be seen by the engine frame after frame.
    struct Frame {
        let width: Int, height: Int
        let bytes: [UInt8]

        init(_ picture: RGBPicture) {
            width = picture.width
            height = picture.height
            bytes = picture.bgra
        }

        func process(_ engine: VitalsEngine, at t: Double) throws -> VitalsFrameResult {
            try bytes.withUnsafeBufferPointer { p in
                let view = try VitalsPixelView(format: .bgra, width: width, height: height, plane0: p.baseAddress!, bytesPerRow0: width * 4)
                return engine.process(view, timestampUs: Int64((t * 1_000_000).rounded()))
            }
        }
    }

    /// A portrait (the benchmark's real photographs) scaled so its face is `faceWidth` px wide, pasted with the face's
    /// top-left corner at (x, y) on `background`; returns the picture and where the face is.
    static func composite(_ file: String, faceBox: VitalsRect, faceWidth: Int, on background: RGBPicture,
                          x: Int, y: Int) throws -> (RGBPicture, VitalsRect) {
        let portrait = try RGBPicture.fixture(file)
        let scale = Double(faceWidth) / Double(faceBox.width)
        let scaled = portrait.resized(width: max(1, Int(Double(portrait.width) * scale)), height: max(1, Int(Double(portrait.height) * scale)))
        var canvas = background
        let ox = x - Int(Double(faceBox.x) * scale), oy = y - Int(Double(faceBox.y) * scale)
        canvas.paste(scaled, x: ox, y: oy)
        return (canvas, VitalsRect(x: x, y: y, width: faceWidth, height: faceWidth))
    }

    static let portraits = [
        ("portrait-astronaut.ppm", VitalsRect(x: 115, y: 67, width: 101, height: 101)),
        ("portrait-hopper.ppm", VitalsRect(x: 85, y: 60, width: 116, height: 116)),
        ("portrait-obama.ppm", VitalsRect(x: 144, y: 41, width: 122, height: 122)),
    ]

    /// Seconds from a face's entry to the first frame on which the engine tracks a face overlapping it (nil: not
    /// within `limit`), after `before` seconds of the background alone.
    static func secondsToFind(entering frame: Frame, face: VitalsRect, after background: Frame, fps: Double,
                              before: Double = 1, limit: Double = 1.5) throws -> Double? {
        let engine = try VitalsEngine()
        var n = 0
        while Double(n) / fps < before {
            let result = try background.process(engine, at: Double(n) / fps)
            #expect(result.face == nil, "a face in the background alone: \(String(describing: result.face))")
            n += 1
        }
        let entry = Double(n) / fps
        while Double(n) / fps < entry + limit {
            let t = Double(n) / fps
            if let found = try frame.process(engine, at: t).face, VitalsEngine.overlap(found, face) > 0.4 { return t - entry }
            n += 1
        }
        return nil
    }

    @Test("a face entering the view from 48 px wide is found within half a second, at 24 and 30 fps",
          arguments: [(504, 896, 24.0), (720, 1280, 30.0), (360, 640, 24.0)])
    func faceEntersTheView(width: Int, height: Int, fps: Double) throws {
        let background = try RGBPicture.fixture("coffee-160x240.ppm").resized(width: width, height: height)
        let backgroundFrame = Frame(background)
        // The smallest face the engine measures at this size (48 px at 504×896), and larger ones, here and there.
        let smallest = Int((Double(min(width, height)) * VitalsEngineConfiguration().minimumFaceFraction).rounded(.up))
        var slowest = 0.0
        var misses: [String] = []
        for (i, (file, box)) in Self.portraits.enumerated() {
            for (j, faceWidth) in [max(48, smallest), max(48, smallest) * 4 / 3, width / 5, width / 3].enumerated() {
                let x = (width - faceWidth) * (1 + 2 * ((i + j) % 3)) / 6, y = height / 6 + (height / 2) * ((i + 2 * j) % 4) / 4
                let (picture, face) = try Self.composite(file, faceBox: box, faceWidth: faceWidth, on: background, x: x, y: y)
                let seconds = try Self.secondsToFind(entering: Frame(picture), face: face, after: backgroundFrame, fps: fps)
                if let seconds { slowest = max(slowest, seconds) } else { misses.append("\(file) \(faceWidth) px at \(x),\(y)") }
                #expect(seconds.map { $0 <= 0.5 } ?? false,
                        "\(file), face \(faceWidth) px at \(x),\(y) in \(width)×\(height) at \(fps) fps: found after \(seconds.map { String($0) } ?? "never")")
            }
        }
        print("\(width)×\(height) at \(fps) fps: slowest find \(slowest) s; not found: \(misses)")
    }

    @Test("the search costs nothing where nothing changes, and is bounded per frame where everything does")
    func budget() throws {
        let width = 504, height = 896, fps = 24.0
        let background = try RGBPicture.fixture("coffee-160x240.ppm").resized(width: width, height: height)
        // A still view: the first cycle searches the whole frame, later frames nothing at all.
        let engine = try VitalsEngine()
        let still = Frame(background)
        var windows: [Int] = []
        for n in 0 ..< 48 {
            _ = try still.process(engine, at: Double(n) / fps)
            windows.append(engine.lastFaceSearchWork.windows)
        }
        let firstCycle = Int((FaceScout.cycleSeconds * fps).rounded(.up)) + 1
        #expect(windows.prefix(firstCycle).reduce(0, +) > 50_000, "first cycle: \(windows.prefix(firstCycle))")
        #expect(windows.dropFirst(firstCycle).allSatisfy { $0 == 0 }, "a still view is searched again: \(windows)")
        // A view that moves every frame (the wearer turning) and holds no face: every window is evaluated once
        // per cycle, spread over the cycle's frames, and no frame does much more than its share.
        let moving = try VitalsEngine()
        windows = []
        let texture = Self.texture(width: width + 200, height: height)
        let frames = 72
        for n in 0 ..< frames {
            let frame = Frame(texture.cropped(VitalsRect(x: 2 * n, y: 0, width: width, height: height)))
            let result = try frame.process(moving, at: Double(n) / fps)
            #expect(result.face == nil, "a face in a texture: \(String(describing: result.face))")
            windows.append(moving.lastFaceSearchWork.windows)
        }
        // The first cycle also searches the whole too-far lane; later ones a slice of it each, at an even cost.
        let first = Array(windows.prefix(firstCycle)), later = Array(windows.dropFirst(firstCycle))
        let cycles = Double(later.count) / fps / FaceScout.cycleSeconds
        let perCycle = Double(later.reduce(0, +)) / cycles
        let share = perCycle / (FaceScout.cycleSeconds * fps)
        let worst = try #require(later.max())
        print("moving view: \(Int(perCycle)) windows a cycle, \(Int(share)) a frame on average, worst frame \(worst): \(windows)")
        #expect(perCycle > 50_000, "the search is not complete: \(windows)")
        // The band a frame may begin makes the worst frame at most about twice its share and a band, in the first
        // cycle (against its own share) as later.
        #expect(Double(worst) <= 2 * share + Double(FaceScout.bandWindows), "worst frame \(worst) against a share of \(Int(share))")
        let firstShare = Double(first.reduce(0, +)) / Double(first.count)
        let firstWorst = try #require(first.max())
        #expect(Double(firstWorst) <= 2 * firstShare + Double(FaceScout.bandWindows),
                "first cycle: worst frame \(firstWorst) against a share of \(Int(firstShare))")
        // The first cycle's extra is the too-far lane, and no later cycle repeats it whole.
        #expect(firstShare > 1.3 * share, "first cycle \(Int(firstShare)) a frame, later \(Int(share))")
        #expect(Double(later.max() ?? 0) < 0.8 * Double(firstWorst), "a later frame as dear as the first cycle's: \(windows)")
    }

    /// A textured picture with no face: blotches of colour and stripes, the same every run.
    static func texture(width: Int, height: Int) -> RGBPicture {
        var picture = RGBPicture(width: width, height: height)
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(seed >> 33)
        }
        for y in 0 ..< height {
            for x in 0 ..< width {
                let v = 100 + 60 * sin(Double(x) / 17) * cos(Double(y) / 23) + 30 * sin(Double(x + 2 * y) / 7)
                let i = (y * width + x) * 3
                picture.rgb[i] = UInt8(max(0, min(255, v)))
                picture.rgb[i + 1] = UInt8(max(0, min(255, v * 0.9 + 20)))
                picture.rgb[i + 2] = UInt8(max(0, min(255, 255 - v)))
            }
        }
        for _ in 0 ..< 60 {
            let w = 10 + next() % 60, h = 10 + next() % 60, x0 = next() % (width - w), y0 = next() % (height - h)
            let c = (UInt8(next() % 256), UInt8(next() % 256), UInt8(next() % 256))
            picture.paste(RGBPicture(width: w, height: h, fill: c), x: x0, y: y0)
        }
        return picture
    }
}
