import Foundation
import WearablesKit

/// A baseline JPEG (JFIF, 4:2:0, standard Huffman tables) encoder for the simulated glasses' photos, written
/// directly from NV12 video-range images (expanded to JFIF's full range).
public enum JPEGEncoder {
    private static let zigzag: [Int] = [
        0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21,
        28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61,
        54, 47, 55, 62, 63,
    ]
    private static let lumaQuant: [Int] = [
        16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29,
        51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121,
        120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
    ]
    private static let chromaQuant: [Int] = {
        var q = [Int](repeating: 99, count: 64)
        let top: [[Int]] = [[17, 18, 24, 47], [18, 21, 26, 66], [24, 26, 56, 99], [47, 66, 99, 99]]
        for y in 0..<4 { for x in 0..<4 { q[y * 8 + x] = top[y][x] } }
        return q
    }()
    private static let dcLumaBits: [UInt8] = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
    private static let dcChromaBits: [UInt8] = [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
    private static let dcValues: [UInt8] = Array(0...11)
    private static let acLumaBits: [UInt8] = [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7D]
    private static let acLumaValues: [UInt8] = [
        0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07, 0x22, 0x71, 0x14,
        0x32, 0x81, 0x91, 0xA1, 0x08, 0x23, 0x42, 0xB1, 0xC1, 0x15, 0x52, 0xD1, 0xF0, 0x24, 0x33, 0x62, 0x72, 0x82, 0x09,
        0x0A, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2A, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A,
        0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4A, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0x63, 0x64, 0x65,
        0x66, 0x67, 0x68, 0x69, 0x6A, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88,
        0x89, 0x8A, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8, 0xA9,
        0xAA, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6, 0xC7, 0xC8, 0xC9, 0xCA,
        0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xD9, 0xDA, 0xE1, 0xE2, 0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9, 0xEA,
        0xF1, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8, 0xF9, 0xFA,
    ]
    private static let acChromaBits: [UInt8] = [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77]
    private static let acChromaValues: [UInt8] = [
        0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71, 0x13, 0x22, 0x32,
        0x81, 0x08, 0x14, 0x42, 0x91, 0xA1, 0xB1, 0xC1, 0x09, 0x23, 0x33, 0x52, 0xF0, 0x15, 0x62, 0x72, 0xD1, 0x0A, 0x16,
        0x24, 0x34, 0xE1, 0x25, 0xF1, 0x17, 0x18, 0x19, 0x1A, 0x26, 0x27, 0x28, 0x29, 0x2A, 0x35, 0x36, 0x37, 0x38, 0x39,
        0x3A, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4A, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0x63, 0x64,
        0x65, 0x66, 0x67, 0x68, 0x69, 0x6A, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0x82, 0x83, 0x84, 0x85, 0x86,
        0x87, 0x88, 0x89, 0x8A, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7,
        0xA8, 0xA9, 0xAA, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6, 0xC7, 0xC8,
        0xC9, 0xCA, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xD9, 0xDA, 0xE2, 0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9,
        0xEA, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8, 0xF9, 0xFA,
    ]

    private struct HuffmanTable {
        var code = [UInt16](repeating: 0, count: 256)
        var length = [UInt8](repeating: 0, count: 256)
        init(bits: [UInt8], values: [UInt8]) {
            var c: UInt16 = 0, k = 0
            for len in 1...16 {
                for _ in 0..<Int(bits[len - 1]) {
                    code[Int(values[k])] = c
                    length[Int(values[k])] = UInt8(len)
                    c += 1
                    k += 1
                }
                c <<= 1
            }
        }
    }

    private struct BitWriter {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var count = 0
        mutating func write(_ bits: UInt16, _ n: Int) {
            guard n > 0 else { return }
            buffer = (buffer << UInt32(n)) | (UInt32(bits) & ((1 << UInt32(n)) - 1))
            count += n
            while count >= 8 {
                let byte = UInt8((buffer >> UInt32(count - 8)) & 0xFF)
                out.append(byte)
                if byte == 0xFF { out.append(0) }
                count -= 8
            }
            buffer &= (1 << UInt32(count)) - 1
        }
        mutating func flush() {
            if count > 0 { write(UInt16((1 << (8 - count)) - 1), 8 - count) }
        }
    }

    private static let cosTable: [Float] = {
        var t = [Float](repeating: 0, count: 64)
        for x in 0..<8 {
            for u in 0..<8 {
                let cu: Double = u == 0 ? 1 / 2.0.squareRoot() : 1
                t[x * 8 + u] = Float(cu * cos(Double(2 * x + 1) * Double(u) * Double.pi / 16) / 2)
            }
        }
        return t
    }()

    /// Encodes an NV12 video-range image as a baseline JPEG.
    /// - Parameter quality: 1 (smallest) ... 100 (best), the IJG scaling of the standard tables.
    @_optimize(speed)
    public static func encode(_ image: RawVideoImage, quality: Int = 85) -> Data {
        let q = min(max(quality, 1), 100)
        let scale = q < 50 ? 5000 / q : 200 - 2 * q
        func scaled(_ table: [Int]) -> [Int] { table.map { min(max(($0 * scale + 50) / 100, 1), 255) } }
        let lq = scaled(lumaQuant), cq = scaled(chromaQuant)
        let w = image.width, h = image.height
        var header: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 0x4A, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
        for (id, table) in [(0, lq), (1, cq)] {
            header += [0xFF, 0xDB, 0, 67, UInt8(id)]
            header += zigzag.map { UInt8(table[$0]) }
        }
        header += [0xFF, 0xC0, 0, 17, 8, UInt8(h >> 8), UInt8(h & 0xFF), UInt8(w >> 8), UInt8(w & 0xFF), 3,
                   1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
        for (cls, bits, values) in [(0x00, dcLumaBits, dcValues), (0x10, acLumaBits, acLumaValues),
                                    (0x01, dcChromaBits, dcValues), (0x11, acChromaBits, acChromaValues)] {
            let length = 2 + 1 + 16 + values.count
            header += [0xFF, 0xC4, UInt8(length >> 8), UInt8(length & 0xFF), UInt8(cls)] + bits + values
        }
        header += [0xFF, 0xDA, 0, 12, 3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0]

        let dcL = HuffmanTable(bits: dcLumaBits, values: dcValues), acL = HuffmanTable(bits: acLumaBits, values: acLumaValues)
        let dcC = HuffmanTable(bits: dcChromaBits, values: dcValues)
        let acC = HuffmanTable(bits: acChromaBits, values: acChromaValues)
        var writer = BitWriter()
        writer.out.reserveCapacity(w * h / 4)
        var predictions = [0, 0, 0]
        let pixels = [UInt8](image.data)
        let chromaBase = image.lumaBytesPerRow * h
        var block = [Float](repeating: 0, count: 64)
        var temp = [Float](repeating: 0, count: 64)

        func encodeBlock(component: Int, quant: [Int], dc: HuffmanTable, ac: HuffmanTable) {
            // Separable DCT-II.
            for y in 0..<8 {
                for u in 0..<8 {
                    var s: Float = 0
                    for x in 0..<8 { s += block[y * 8 + x] * cosTable[x * 8 + u] }
                    temp[y * 8 + u] = s
                }
            }
            var coefficients = [Int](repeating: 0, count: 64)
            for u in 0..<8 {
                for v in 0..<8 {
                    var s: Float = 0
                    for y in 0..<8 { s += temp[y * 8 + u] * cosTable[y * 8 + v] }
                    let index = v * 8 + u
                    coefficients[index] = Int((s / Float(quant[index])).rounded())
                }
            }
            func magnitude(_ value: Int) -> (Int, UInt16) {
                let a = abs(value)
                var size = 0
                while (1 << size) <= a { size += 1 }
                let bits = value >= 0 ? UInt16(value) : UInt16(truncatingIfNeeded: value - 1 + (1 << size))
                return (size, bits)
            }
            let diff = coefficients[0] - predictions[component]
            predictions[component] = coefficients[0]
            let (dcSize, dcBits) = magnitude(diff)
            writer.write(dc.code[dcSize], Int(dc.length[dcSize]))
            writer.write(dcBits, dcSize)
            var run = 0
            for k in 1..<64 {
                let value = coefficients[zigzag[k]]
                if value == 0 {
                    run += 1
                    continue
                }
                while run > 15 {
                    writer.write(ac.code[0xF0], Int(ac.length[0xF0]))
                    run -= 16
                }
                let (size, bits) = magnitude(value)
                let symbol = (run << 4) | size
                writer.write(ac.code[symbol], Int(ac.length[symbol]))
                writer.write(bits, size)
                run = 0
            }
            if run > 0 { writer.write(ac.code[0], Int(ac.length[0])) }
        }

        @inline(__always) func luma(_ x: Int, _ y: Int) -> Float {
            let v = Float(pixels[min(y, h - 1) * image.lumaBytesPerRow + min(x, w - 1)])
            return min(max((v - 16) * 255 / 219, 0), 255) - 128
        }
        @inline(__always) func chroma(_ x: Int, _ y: Int, _ c: Int) -> Float {
            let v = Float(pixels[chromaBase + min(y, h / 2 - 1) * image.chromaBytesPerRow + min(x, w / 2 - 1) * 2 + c])
            return min(max((v - 128) * 255 / 224, -128), 127)
        }
        for my in stride(from: 0, to: h, by: 16) {
            for mx in stride(from: 0, to: w, by: 16) {
                for (bx, by) in [(0, 0), (8, 0), (0, 8), (8, 8)] {
                    for y in 0..<8 { for x in 0..<8 { block[y * 8 + x] = luma(mx + bx + x, my + by + y) } }
                    encodeBlock(component: 0, quant: lq, dc: dcL, ac: acL)
                }
                for c in 0..<2 {
                    for y in 0..<8 { for x in 0..<8 { block[y * 8 + x] = chroma(mx / 2 + x, my / 2 + y, c) } }
                    encodeBlock(component: 1 + c, quant: cq, dc: dcC, ac: acC)
                }
            }
        }
        writer.flush()
        return Data(header + writer.out + [0xFF, 0xD9])
    }
}
