import Foundation

// Validation: the picture verdict (one face, light, distance, motion, frame rate) and the frame's luma.
extension VitalsEngine {
    /// The condition of a frame with a face in `box` whose skin has mean `luma`.
    func verdict(box: VitalsRect, luma: Double, view: VitalsPixelView, at t: Double) -> VitalsCondition {
        let c = configuration
        if extraFaces > 0 { return .multipleFacesFound }
        if luma < c.darkLuma { return .tooDark }
        if luma > c.brightLuma { return .tooBright }
        let shorter = Double(min(view.width, view.height))
        let clipped = box.x < 0 || box.y < 0 || box.maxX > view.width || box.maxY > view.height
        if Double(box.width) > c.maximumFaceFraction * shorter || clipped { return .faceTooClose }
        if Double(box.width) < c.minimumFaceFraction * shorter { return .faceTooFar }
        // Face speed over the last second, in face widths per second.
        if let last = samples.last, let past = samples.last(where: { last.t - $0.t >= 1 }) {
            let dt = last.t - past.t
            let dist = ((last.faceX - past.faceX) * (last.faceX - past.faceX) + (last.faceY - past.faceY) * (last.faceY - past.faceY)).squareRoot()
            if dist / dt > c.maximumFaceSpeed * Double(box.width) { return .excessiveMotion }
        }
        if frameTimes.count >= 8, let first = frameTimes.first, let last = frameTimes.last, last > first {
            let fps = Double(frameTimes.count - 1) / (last - first)
            if fps < c.minimumFrameRate { return .frameRateTooLow }
        }
        return .ok
    }

    /// Mean luma of the frame (0–255, full range) and the fraction of clipped (near-white) samples.
    static func frameLuma(_ view: VitalsPixelView) -> (mean: Double, clipped: Double) {
        var s = 0, n = 0, c = 0
        let white = view.format == .nv12VideoRange ? 232 : 250
        var y = 0
        let step = max(4, min(view.width, view.height) / 32)
        while y < view.height {
            var x = 0
            while x < view.width {
                let v = view.luma(x, y)
                s += v; n += 1
                if v >= white { c += 1 }
                x += step
            }
            y += step
        }
        let mean = Double(s) / Double(max(n, 1))
        return (view.format == .nv12VideoRange ? (mean - 16) * 255 / 219 : mean, Double(c) / Double(max(n, 1)))
    }
}
