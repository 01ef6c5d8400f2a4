import Foundation

// Face tracking: full and local detection, profile tracking in between, and the chest and background regions
// placed from the face.
extension VitalsEngine {
    func trackFace(_ view: VitalsPixelView, at t: Double) {
        let shorter = min(view.width, view.height)
        // Detection works on luma shrunk to about 170 px across (faces from ~70 px up at 504×896).
        let factor = max(1, shorter / 168)
        if t - lastFullDetection >= configuration.fullDetectionInterval || trackedBox == nil && t - lastFullDetection >= 0.25 {
            lastFullDetection = t
            let image = GrayImage(downsampling: view, factor: factor)
            var faces = detector.detect(in: image, minSize: 24).map { scaled($0.rect, by: factor) }
            usingSkinFinder = false
            if faces.isEmpty, let blob = SkinFaceFinder(step: max(2, shorter / 128)).find(in: view) {
                faces = [blob]
                usingSkinFinder = true
            }
            extraFaces = max(0, faces.count - 1)
            if let face = faces.first { adopt(face, view: view, force: trackedBox == nil) } else { loseFace() }
            framesSinceLocal = 0
            return
        }
        guard let box = trackedBox else { return }
        // Between detections: follow the face with its row and column profiles.
        if let dx = faceMotionX?.update(view), let dy = faceMotionY?.update(view), let anchor = anchorBox {
            trackedBox = VitalsRect(x: anchor.x + Int(dx.rounded()), y: anchor.y + Int(dy.rounded()), width: anchor.width, height: anchor.height)
            subpixel = (Double(anchor.x) + dx, Double(anchor.y) + dy)
        }
        framesSinceLocal += 1
        if usingSkinFinder {
            if framesSinceLocal >= configuration.localDetectionInterval {
                framesSinceLocal = 0
                if let blob = SkinFaceFinder(step: max(2, shorter / 128)).find(in: view) { adopt(blob, view: view, force: false) } else { loseFace() }
            }
            return
        }
        if framesSinceLocal >= configuration.localDetectionInterval {
            framesSinceLocal = 0
            let margin = box.width / 2
            let region = VitalsRect(x: box.x - margin, y: box.y - margin, width: box.width + 2 * margin, height: box.height + 2 * margin)
                .clamped(width: view.width, height: view.height)
            let image = GrayImage(downsampling: view, factor: factor, region: region)
            let minSize = Int(Double(box.width) * 0.7) / factor, maxSize = Int(Double(box.width) * 1.4) / factor + 1
            let faces = detector.detect(in: image, minSize: max(24, minSize), maxSize: maxSize)
            if let face = faces.first {
                localMisses = 0
                let r = scaled(face.rect, by: factor)
                adopt(VitalsRect(x: r.x + region.x, y: r.y + region.y, width: r.width, height: r.height), view: view, force: false)
            } else {
                localMisses += 1
                if localMisses >= 3 { loseFace() }
            }
        }
    }

    private func scaled(_ r: VitalsRect, by f: Int) -> VitalsRect {
        VitalsRect(x: r.x * f, y: r.y * f, width: r.width * f, height: r.height * f)
    }

    /// Takes a detection as the face box when it differs enough from the tracked one (detector jitter would
    /// otherwise step the skin averages).
    private func adopt(_ face: VitalsRect, view: VitalsPixelView, force: Bool) {
        if !force, let current = trackedBox {
            let dcx = Double(face.x + face.width / 2 - current.x - current.width / 2)
            let dcy = Double(face.y + face.height / 2 - current.y - current.height / 2)
            let ds = Double(face.width - current.width)
            let w = Double(current.width)
            if abs(dcx) < 0.12 * w, abs(dcy) < 0.12 * w, abs(ds) < 0.2 * w { return }
            anchorOffset.x += Double(current.x - face.x)
            anchorOffset.y += Double(current.y - face.y)
        }
        anchorBox = face
        trackedBox = face
        subpixel = (Double(face.x), Double(face.y))
        skinPosition = subpixel
        let maxShift = max(4, face.width / 12)
        faceMotionX = ProfileMotion(region: face, vertical: false, maxShift: maxShift)
        faceMotionY = ProfileMotion(region: face, vertical: true, maxShift: maxShift)
        // The chest below the face, and background beside the head, fixed in frame coordinates from now on.
        let cx = face.x + face.width / 2
        let chestTop = face.maxY + face.height / 5
        let chestHeight = face.height
        let upper = VitalsRect(x: cx - face.width, y: chestTop, width: 2 * face.width, height: chestHeight / 2)
        let lower = VitalsRect(x: cx - face.width, y: chestTop + chestHeight / 2, width: 2 * face.width, height: chestHeight / 2)
        let shift = max(4, face.height / 16)
        if chestUpper == nil || force { chestUpper = ProfileMotion(region: upper, vertical: true, maxShift: shift) } else { chestUpper?.reset(region: upper) }
        if chestLower == nil || force { chestLower = ProfileMotion(region: lower, vertical: true, maxShift: shift) } else { chestLower?.reset(region: lower) }
        let gap = face.width / 5
        let side = [
            VitalsRect(x: 0, y: face.y - face.height / 2, width: face.x - gap, height: face.height * 3 / 2),
            VitalsRect(x: face.maxX + gap, y: face.y - face.height / 2, width: view.width - face.maxX - gap, height: face.height * 3 / 2),
            VitalsRect(x: face.x, y: 0, width: face.width, height: face.y - gap),
        ]
        backgroundRegions = side
        if backgrounds.count != side.count || force {
            backgrounds = side.map { ProfileMotion(region: $0, vertical: true, maxShift: shift) }
        } else {
            for i in side.indices { backgrounds[i].reset(region: side[i]) }
        }
    }

    private func loseFace() {
        trackedBox = nil
        anchorBox = nil
        localMisses = 0
    }
}
