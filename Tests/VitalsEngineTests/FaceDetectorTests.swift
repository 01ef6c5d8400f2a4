import Testing
@testable import VitalsEngine

@Suite("Face detector on real photographs")
struct FaceDetectorTests {
    static let cascade = Result { try HaarCascade.frontalFace() }

    @Test("the OpenCV frontal-face cascade loads with all its stages")
    func cascadeLoads() throws {
        let cascade = try Self.cascade.get()
        #expect(cascade.windowWidth == 24 && cascade.windowHeight == 24)
        #expect(cascade.stageCount == 25)
        #expect(cascade.featureCount == 2913)
    }

    @Test("a malformed cascade is a typed error")
    func malformedCascade() {
        #expect(throws: VitalsEngineError.self) { try HaarCascade(xml: Array("<opencv_storage></opencv_storage>".utf8)) }
        #expect(throws: VitalsEngineError.self) { try HaarCascade(contentsOfFile: "/nonexistent/cascade.xml") }
    }

    @Test("finds the astronaut's face")
    func astronaut() throws {
        let detector = FaceDetector(cascade: try Self.cascade.get(), minNeighbors: 5)
        let picture = try RGBPicture.fixture("astronaut-256.ppm")
        let faces = detector.detect(in: picture.gray, minSize: 30)
        print("astronaut faces:", faces)
        #expect(faces.count == 1)
        let face = try #require(faces.first).rect
        let cx = Double(face.x) + Double(face.width) / 2, cy = Double(face.y) + Double(face.height) / 2
        #expect(abs(cx - astronautFaceCenter.x) < 15 && abs(cy - astronautFaceCenter.y) < 15)
        #expect((50 ... 110).contains(face.width))
    }

    @Test("finds no face in a photograph of a coffee cup")
    func coffee() throws {
        let detector = FaceDetector(cascade: try Self.cascade.get(), minNeighbors: 5)
        let picture = try RGBPicture.fixture("coffee-160x240.ppm")
        #expect(detector.detect(in: picture.gray, minSize: 24).isEmpty)
    }

    @Test("finds both faces when two people are side by side")
    func twoFaces() throws {
        let detector = FaceDetector(cascade: try Self.cascade.get(), minNeighbors: 5)
        let astronaut = try RGBPicture.fixture("astronaut-256.ppm").resized(width: 200, height: 200)
        var canvas = RGBPicture(width: 420, height: 220)
        canvas.paste(astronaut, x: 5, y: 10)
        canvas.paste(astronaut, x: 215, y: 10)
        let faces = detector.detect(in: canvas.gray, minSize: 24)
        #expect(faces.count == 2)
    }

    @Test("the bilinear resize matches the per-pixel definition, down and up")
    func resize() {
        let pixels: [UInt8] = (0 ..< 37 * 23).map { (i: Int) -> UInt8 in UInt8((i * 31 + i / 37 * 17) % 256) }
        let image = GrayImage(width: 37, height: 23, pixels: pixels)
        for (w, h) in [(25, 14), (37, 23), (50, 40), (9, 21)] {
            let out = image.resized(width: w, height: h)
            let sx = Double(image.width) / Double(w), sy = Double(image.height) / Double(h)
            for y in 0 ..< h {
                for x in 0 ..< w {
                    let fx = max(0, (Double(x) + 0.5) * sx - 0.5), fy = max(0, (Double(y) + 0.5) * sy - 0.5)
                    let x0 = min(Int(fx), image.width - 1), y0 = min(Int(fy), image.height - 1)
                    let x1 = min(x0 + 1, image.width - 1), y1 = min(y0 + 1, image.height - 1)
                    let wx = fx - Double(x0), wy = fy - Double(y0)
                    func p(_ x: Int, _ y: Int) -> Double { Double(image.pixels[y * image.width + x]) }
                    let top: Double = p(x0, y0) * (1 - wx) + p(x1, y0) * wx
                    let bottom: Double = p(x0, y1) * (1 - wx) + p(x1, y1) * wx
                    let v: Double = top * (1 - wy) + bottom * wy
                    #expect(out.pixels[y * w + x] == UInt8(min(255, max(0, v.rounded()))), "\(w)×\(h) at \(x), \(y)")
                }
            }
        }
    }
}
