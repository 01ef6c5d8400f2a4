import Foundation
import Testing
@testable import VitalsEngine

/// Frames of 504×896 (the glasses' medium portrait size) built from the real photographs.
enum PhotoFrames {
    static let width = 504, height = 896

    /// The astronaut's head and shoulders filling the frame (face about 200 px wide, 40 % of the width).
    static func oneFace() throws -> RGBPicture {
        let crop = try RGBPicture.fixture("astronaut-256.ppm").cropped(VitalsRect(x: 45, y: 0, width: 144, height: 256))
        return crop.resized(width: width, height: height)
    }

    static func noFace() throws -> RGBPicture {
        try RGBPicture.fixture("coffee-160x240.ppm").resized(width: width, height: height)
    }

    static func twoFaces() throws -> RGBPicture {
        let crop = try RGBPicture.fixture("astronaut-256.ppm").cropped(VitalsRect(x: 70, y: 10, width: 90, height: 160))
        var canvas = RGBPicture(width: width, height: height)
        canvas.paste(crop.resized(width: 252, height: 448), x: 0, y: 200)
        canvas.paste(crop.resized(width: 252, height: 448), x: 252, y: 200)
        return canvas
    }

    /// The two faces of ``twoFaces()``, the second one `scale` times the size of the first (and further down, as a
    /// person further away would be).
    static func twoFaces(secondScale scale: Double) throws -> RGBPicture {
        let crop = try RGBPicture.fixture("astronaut-256.ppm").cropped(VitalsRect(x: 70, y: 10, width: 90, height: 160))
        var canvas = RGBPicture(width: width, height: height)
        canvas.paste(crop.resized(width: 252, height: 448), x: 0, y: 200)
        canvas.paste(crop.resized(width: Int(252 * scale), height: Int(448 * scale)), x: 270, y: 300)
        return canvas
    }

    /// The astronaut far away: face about 40 px wide (8 % of the frame's width), below the 48 px at which the
    /// engine still measures (docs/VITALS-ENGINE.md, accuracy against face size).
    static func faceTooFar() throws -> RGBPicture {
        let photo = try RGBPicture.fixture("astronaut-256.ppm").resized(width: 200, height: 200)
        var canvas = RGBPicture(width: width, height: height)
        canvas.paste(photo, x: 152, y: 300)
        return canvas
    }

    /// The astronaut at a conversational distance: face about 94 px wide (19 % of the frame's width), which the
    /// engine before issue #18 refused as too far.
    static func faceAtTwoMetres() throws -> RGBPicture {
        let photo = try RGBPicture.fixture("astronaut-256.ppm").resized(width: 470, height: 470)
        var canvas = RGBPicture(width: width, height: height)
        canvas.paste(photo, x: 17, y: 250)
        return canvas
    }

    /// The astronaut's face filling most of the frame.
    static func faceTooClose() throws -> RGBPicture {
        let crop = try RGBPicture.fixture("astronaut-256.ppm").cropped(VitalsRect(x: 80, y: 20, width: 60, height: 107))
        return crop.resized(width: width, height: height)
    }

    /// The one-face frame shifted by (dx, dy) on a plain canvas.
    static func shifted(_ picture: RGBPicture, dx: Int, dy: Int) -> RGBPicture {
        var canvas = RGBPicture(width: width, height: height)
        canvas.paste(picture, x: dx, y: dy)
        return canvas
    }
}

@Suite("Validation status on real photographs", .serialized)
struct ValidationTests {
    /// Runs `frames` frames at `fps` through a fresh engine and returns the last condition.
    static func condition(fps: Double = 30, frames: Int = 20, _ picture: (Int) throws -> RGBPicture) throws -> (VitalsCondition, VitalsFrameResult) {
        let engine = try VitalsEngine()
        var last: VitalsFrameResult?
        for n in 0 ..< frames {
            let p = try picture(n)
            last = try p.withView { engine.process($0, timestampUs: Int64(Double(n) / fps * 1_000_000)) }
        }
        return (last!.condition, last!)
    }

    @Test("one face in good light is ok, and the face box is on the face")
    func ok() throws {
        let picture = try PhotoFrames.oneFace()
        let (c, r) = try Self.condition { _ in picture }
        #expect(c == .ok)
        let face = try #require(r.face)
        // The astronaut's face centre (x≈110, y≈55 in the 256 photo) after crop and ×3.5 scaling.
        #expect(abs(Double(face.x + face.width / 2) - (110 - 45) * 3.5) < 30)
        #expect(abs(Double(face.y + face.height / 2) - 55 * 3.5) < 30)
    }

    @Test("no face")
    func noFace() throws {
        let picture = try PhotoFrames.noFace()
        #expect(try Self.condition { _ in picture }.0 == .noFaceFound)
    }

    @Test("two faces")
    func twoFaces() throws {
        let picture = try PhotoFrames.twoFaces()
        // Long enough for the search that finds them (at most 0.42 s) and two confirmations 0.3 s apart.
        #expect(try Self.condition(frames: 40) { _ in picture }.0 == .multipleFacesFound)
    }

    @Test("a second face counts when it could be the subject (0.8 of the tracked width), not when it is far smaller (0.4)")
    func rivalFaceSize() throws {
        // Long enough for the first search and two confirmations 0.3 s apart.
        let (rival, _) = try Self.condition(frames: 40) { _ in try PhotoFrames.twoFaces(secondScale: 0.8) }
        #expect(rival == .multipleFacesFound)
        let (distant, result) = try Self.condition(frames: 40) { _ in try PhotoFrames.twoFaces(secondScale: 0.4) }
        #expect(distant == .ok, "got \(distant), face \(String(describing: result.face))")
        // The smaller face is one the search finds, with a second face's votes, when it looks at every size: it is
        // left out by the rule, not missed by the detector. (With no face tracked, the budgeted search applies the
        // same rule to what it groups: `FaceScout`.)
        let engine = try VitalsEngine()
        let found = try PhotoFrames.twoFaces(secondScale: 0.4).withView { engine.fullFrameFaces($0) }
        #expect(found.filter { $0.votes >= VitalsEngine.secondFaceVotes }.count >= 2, "found \(found)")
    }

    @Test("a face too small in the frame")
    func tooFar() throws {
        let picture = try PhotoFrames.faceTooFar()
        let (condition, result) = try Self.condition { _ in picture }
        #expect(condition == .faceTooFar, "got \(condition), face \(String(describing: result.face))")
    }

    @Test("a face 94 px wide (two metres away) is measured, not too far")
    func faceAtTwoMetres() throws {
        let picture = try PhotoFrames.faceAtTwoMetres()
        let (condition, result) = try Self.condition { _ in picture }
        #expect(condition == .ok, "got \(condition), face \(String(describing: result.face))")
    }

    @Test("skin regions are sized to the face: wide on a small face, compact on a large one, on skin either way")
    func skinRegionsSizedToTheFace() throws {
        func share(_ width: Int) -> Double {
            let box = VitalsRect(x: 10, y: 10, width: width, height: width)
            let regions = VitalsEngine.skinRegions(of: box)
            for r in regions { #expect(r.x >= box.x && r.y >= box.y && r.maxX <= box.maxX && r.maxY <= box.maxY) }
            return Double(regions.reduce(0) { $0 + $1.width * $1.height }) / Double(width * width)
        }
        #expect(abs(share(50) - 0.32) < 0.03, "50 px: \(share(50))")
        #expect(abs(share(VitalsEngine.wideSkinBelow) - 0.32) < 0.03)
        #expect(abs(share(VitalsEngine.compactSkinFrom) - 0.144) < 0.02, "compact: \(share(VitalsEngine.compactSkinFrom))")
        #expect(abs(share(150) - 0.32) < 0.03, "150 px: \(share(150))")
        let between = (VitalsEngine.wideSkinBelow + VitalsEngine.compactSkinFrom) / 2
        #expect(share(between) > share(VitalsEngine.compactSkinFrom) + 0.05 && share(between) < share(50) - 0.05)
        // On the real face 94 px wide, the wide regions are still on skin: their colour is the compact regions'.
        let picture = try PhotoFrames.faceAtTwoMetres()
        let face = try #require(try Self.condition { _ in picture }.1.face)
        let (wide, compact) = try picture.withView { view -> (RGB, RGB) in
            let wide = try #require(VitalsEngine.meanColour(of: VitalsEngine.skinRegions(of: face), in: view))
            let compact = try #require(VitalsEngine.meanColour(of: VitalsEngine.skinRegions(of: face, wide: 0), in: view))
            return (wide, compact)
        }
        #expect(abs(wide.luma - compact.luma) < 0.08 * compact.luma, "wide \(wide), compact \(compact)")
        #expect(abs(wide.r / wide.g - compact.r / compact.g) < 0.05, "wide \(wide), compact \(compact)")
    }

    @Test("a face too close")
    func tooClose() throws {
        let picture = try PhotoFrames.faceTooClose()
        #expect(try Self.condition { _ in picture }.0 == .faceTooClose)
    }

    @Test("too dark and too bright")
    func light() throws {
        let dark = try PhotoFrames.oneFace().scaled(by: 0.12)
        #expect(try Self.condition { _ in dark }.0 == .tooDark)
        let bright = try PhotoFrames.oneFace().scaled(by: 4)
        let brightCondition = try Self.condition { _ in bright }.0
        #expect(brightCondition == .tooBright, "got \(brightCondition)")
    }

    @Test("a face sweeping across the view is excessive motion")
    func motion() throws {
        let picture = try PhotoFrames.oneFace()
        // 180 px/s, about one face width per second, for 1.6 s: the verdict says so once the face has been tracked
        // for a second. (At 120 px/s the verdict used to depend on the box the first search happened to find: the
        // profile tracker follows a sweeping face only so far between local detections, and a re-adopted box's jump
        // is not counted as motion, so the motion measured stays near the limit of half a face width per second.)
        let engine = try VitalsEngine()
        var conditions: [VitalsCondition] = []
        for n in 0 ..< 48 {
            let frame = PhotoFrames.shifted(picture, dx: 6 * n - 40, dy: 0)
            conditions.append(try frame.withView { engine.process($0, timestampUs: Int64(Double(n) / 30 * 1_000_000)) }.condition)
        }
        #expect(conditions.contains(.excessiveMotion), "\(conditions)")
    }

    @Test("frames at 10 fps are too slow")
    func frameRate() throws {
        let picture = try PhotoFrames.oneFace()
        #expect(try Self.condition(fps: 10, frames: 20) { _ in picture }.0 == .frameRateTooLow)
    }

    @Test("every condition has a hint a person can act on")
    func hints() {
        for c in VitalsCondition.allCases { #expect(c.hint.count > 20) }
    }
}
