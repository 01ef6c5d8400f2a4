import Foundation
import Testing
@testable import GlassesSimulator

/// `FaceImage(ppmFile:)`: read whole up to its documented size, and refused in words otherwise.
@Suite("Face image files")
struct FaceImageTests {
    private static func file(_ name: String, _ data: Data) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("face-\(UUID().uuidString)-\(name)")
        try data.write(to: url)
        return url
    }

    private static func ppm(width: Int, height: Int, pixels: Int? = nil, comment: Bool = false) -> Data {
        var data = Data("P6\n\(comment ? "# a face\n" : "")\(width) \(height)\n255\n".utf8)
        data.append(Data(repeating: 0x80, count: pixels ?? width * height * 3))
        return data
    }

    @Test("a complete PPM larger than 64 MiB (4800x4800) is read, as 'at most 8192x8192' promises")
    func largeImageIsRead() throws {
        let url = try Self.file("big.ppm", Self.ppm(width: 4800, height: 4800))
        defer { try? FileManager.default.removeItem(at: url) }
        let image = try FaceImage(ppmFile: url)
        #expect(image.width == 4800 && image.height == 4800 && image.rgb.count == 4800 * 4800 * 3)
        #expect(image.rgb.allSatisfy { $0 == 0x80 })
    }

    @Test("a small PPM with a comment reads its pixels exactly")
    func smallImage() throws {
        var data = Self.ppm(width: 2, height: 1, pixels: 0, comment: true)
        data.append(contentsOf: [1, 2, 3, 4, 5, 6, 7])  // one byte more than the pixels: ignored
        let url = try Self.file("small.ppm", data)
        defer { try? FileManager.default.removeItem(at: url) }
        let image = try FaceImage(ppmFile: url)
        #expect(image.width == 2 && image.height == 1 && image.rgb == [1, 2, 3, 4, 5, 6])
    }

    @Test("refusals say what is wrong, naming the file once: too large (with the limit), truncated, a folder, a device, missing, not a PPM")
    func refusals() throws {
        let tooWide = try Self.file("wide.ppm", Self.ppm(width: 9000, height: 2))
        let cut = try Self.file("cut.ppm", Self.ppm(width: 100, height: 100, pixels: 1000))
        let text = try Self.file("notes.ppm", Data("hello\n".utf8))
        let folder = FileManager.default.temporaryDirectory
        defer { for url in [tooWide, cut, text] { try? FileManager.default.removeItem(at: url) } }
        let cases: [(URL, String)] = [
            (tooWide, "the face image \(tooWide.path) is 9000×2; a face image may be at most 8192×8192 pixels"),
            (cut, "the face image \(cut.path) is truncated: it has 1000 of its 30000 pixel bytes (100×100 RGB)"),
            (folder, "the face image \(folder.path) is a folder, not a PPM file"),
            (URL(fileURLWithPath: "/dev/zero"), "the face image /dev/zero is not a regular file (a device): give a PPM file"),
            (URL(fileURLWithPath: "/nonexistent/face.ppm"), "cannot read the face image /nonexistent/face.ppm: no such file or directory"),
            (text, "the face image \(text.path) is not a binary PPM (P6, maxval 255)"),
        ]
        for (url, message) in cases {
            do {
                _ = try FaceImage(ppmFile: url)
                Issue.record("\(url.path) was read")
            } catch {
                #expect(error.code == .invalidFeed)
                #expect(error.message == message)
            }
        }
    }
}
