import Foundation

// Face tracking: full and local detection, profile tracking in between, and the chest and background regions
// placed from the face.
extension VitalsEngine {
    func trackFace(_ view: VitalsPixelView, at t: Double) {
        let shorter = min(view.width, view.height)
        guard let current = trackedBox else {
            scoutForFace(view, at: t)
            return
        }
        let confirming = pendingFaces.contains { $0.sightings < Self.secondFaceSightings } && t - lastFullDetection >= Self.confirmDelay
        if t - lastFullDetection >= configuration.fullDetectionInterval || confirming {
            lastFullDetection = t
            // With a face tracked the search is for a second face as large as a rival subject (at least
            // ``rivalFaceFraction`` of the tracked width): a face much further away than the subject does not compete
            // for the measurement, and the small scales are most of a search's cost.
            let atLeast = Int(Double(current.width) * Self.rivalFaceFraction)
            let found = fullFrameFaces(view, atLeast: atLeast)
            var faces = found.map(\.rect)
            if faces.isEmpty, usingSkinFinder, let blob = SkinFaceFinder(step: max(2, shorter / 128)).find(in: view) {
                faces = [blob]
            } else if !faces.isEmpty {
                usingSkinFinder = false
            }
            let strong = found.filter { $0.votes >= Self.secondFaceVotes }.map(\.rect)
            var others = faces
            // Ours is the detection on the tracked face; a miss keeps the track (hysteresis, see `noteMiss`).
            if let i = faces.indices.max(by: { Self.overlap(faces[$0], current) < Self.overlap(faces[$1], current) }),
               Self.overlap(faces[i], current) > 0.25 {
                noteHit(at: t)
                adopt(faces[i], view: view, force: false, at: t)
                others.remove(at: i)
            } else {
                noteMiss(at: t)
            }
            // A second face counts only when later searches find it again in the same place.
            others = others.filter { o in strong.contains(o) }
            pendingFaces = others.map { o in
                (rect: o, sightings: 1 + (pendingFaces.first { Self.overlap($0.rect, o) > 0.3 }?.sightings ?? 0))
            }
            extraFaces = pendingFaces.filter { $0.sightings >= Self.secondFaceSightings }.count
            framesSinceLocal = 0
            return
        }
        guard let box = trackedBox else { return }
        // Between detections: follow the face with its row and column profiles (the skin regions move only where
        // both match). The head's height for breathing also follows the camera's motion through the frames in which
        // the rows find no match (a small face's short profiles often miss under a shake).
        // Both row trackers share one profile of the face (``headMotion`` and ``faceMotionY`` track the same region).
        let rows = faceMotionY?.profile(of: view)
        if let anchor = anchorBox, headMotion != nil {
            if let dy = headMotion?.update(profile: rows, travel: sensorTravel?.y) { lastFaceMatch = (dy, cameraMotion.y) }
            headY = anchorOffset.y + Double(anchor.y) + lastFaceMatch.face + cameraMotion.y - lastFaceMatch.camera
        }
        // Both axes every frame, so that each keeps its own last match for the next frame (``ProfileReach``).
        let dx = faceMotionX?.update(view, travel: sensorTravel?.x), dy = faceMotionY?.update(profile: rows, travel: sensorTravel?.y)
        if let dx, let dy, let anchor = anchorBox {
            trackedBox = VitalsRect(x: anchor.x + Int(dx.rounded()), y: anchor.y + Int(dy.rounded()), width: anchor.width, height: anchor.height)
            subpixel = (Double(anchor.x) + dx, Double(anchor.y) + dy)
        }
        framesSinceLocal += 1
        guard framesSinceLocal >= configuration.localDetectionInterval else { return }
        framesSinceLocal = 0
        if usingSkinFinder {
            if let blob = SkinFaceFinder(step: max(2, shorter / 128)).find(in: view) {
                noteHit(at: t)
                adopt(blob, view: view, force: false, at: t)
            } else {
                noteMiss(at: t)
            }
            return
        }
        if let face = localFace(view, near: box) {
            noteHit(at: t)
            adopt(face, view: view, force: false, at: t)
        } else {
            noteMiss(at: t)
        }
    }

    /// The face near `box` in this frame, 0.8–1.25 of its width: the cascade around it, on luma shrunk so the face
    /// is about 40 px across (never below the cascade's 24).
    func localFace(_ view: VitalsPixelView, near box: VitalsRect) -> VitalsRect? {
        let factor = max(1, box.width / 40)
        let margin = box.width / 2
        let region = VitalsRect(x: box.x - margin, y: box.y - margin, width: box.width + 2 * margin, height: box.height + 2 * margin)
            .clamped(width: view.width, height: view.height)
        let image = GrayImage(downsampling: view, factor: factor, region: region)
        let minSize = Int(Double(box.width) * 0.8) / factor, maxSize = Int(Double(box.width) * 1.25) / factor + 1
        guard let face = searchDetector.detect(in: image, minSize: max(24, minSize), maxSize: max(25, maxSize)).first else { return nil }
        let r = scaled(face.rect, by: factor)
        return VitalsRect(x: r.x + region.x, y: r.y + region.y, width: r.width, height: r.height)
    }

    /// With no face tracked: this frame's share of the budgeted search (``FaceScout``). A face it reports is adopted
    /// once this frame confirms it where it is now (the hits behind it may be from the last few frames), and the
    /// others start the second-face count; a skin-colour blob is adopted as it is.
    private func scoutForFace(_ view: VitalsPixelView, at t: Double) {
        let span = (frameTimes.last ?? 0) - (frameTimes.first ?? 0)
        let rate = frameTimes.count >= 2 && span > 0 ? Double(frameTimes.count - 1) / span : 30
        switch scout.step(view, at: t, detector: searchDetector, frameRate: rate, minimumFaceFraction: configuration.minimumFaceFraction) {
        case .nothing:
            return
        case .skin(let blob):
            usingSkinFinder = true
            start(tracking: blob, view: view, others: [], at: t)
        case .faces(let faces, let fresh):
            guard let largest = faces.first else { return }
            var face = largest.rect
            if !fresh {
                // Seen partly on earlier frames: confirmed where it is on this one. The box keeps the search's size (the
                // mean of its windows over several scales; one local detection of a 50 px face can say 47, under the
                // measurable size) and takes this frame's position.
                guard let here = localFace(view, near: largest.rect) else {
                    scout.forget(largest.rect)
                    return
                }
                face.x = here.x + (here.width - face.width) / 2
                face.y = here.y + (here.height - face.height) / 2
            }
            usingSkinFinder = false
            // Other faces as large as a rival are a first sighting; the searches that confirm them (0.3 s apart)
            // hold them to the strict detector's votes.
            let rivals = faces.dropFirst().map(\.rect)
            start(tracking: face, view: view, others: rivals, at: t)
        }
    }

    /// Starts tracking a face the search found; `others` (rivals as large as the subject) count as seen once.
    private func start(tracking face: VitalsRect, view: VitalsPixelView, others: [VitalsRect], at t: Double) {
        noteHit(at: t)
        adopt(face, view: view, force: true, at: t)
        // The search adopts the first face it finds, larger faces first, so a rival may be in levels it had not
        // reached: the first full search for rivals comes 0.3 s later, not 2 s.
        lastFullDetection = t - configuration.fullDetectionInterval + Self.confirmDelay
        pendingFaces = others.map { (rect: $0, sightings: 1) }
        extraFaces = 0
        framesSinceLocal = 0
        scout.reset()
    }

    /// Seconds after a search that found a possible second face before the search that may confirm it.
    static let confirmDelay = 0.3
    /// Searches in a row that must find a second face before it counts (the first and two confirmations).
    static let secondFaceSightings = 3

    /// Faces in the whole frame, largest first, with the votes each had (the search for a rival while a face is
    /// tracked; with none tracked, ``FaceScout`` searches on its budget): the cascade on luma shrunk to about 170 px
    /// across (faces from ~72 px at 504×896) and, for the small sizes that misses, on luma shrunk to about 250 px
    /// across (faces from ~48 px). `atLeast` (frame pixels) leaves out the scales below it, and the fine pass
    /// altogether when the coarse one covers it.
    func fullFrameFaces(_ view: VitalsPixelView, atLeast: Int = 0) -> [(rect: VitalsRect, votes: Int)] {
        let shorter = min(view.width, view.height)
        let coarse = max(1, shorter / 168), fine = max(1, shorter / 252)
        var faces = searchDetector.detect(in: GrayImage(downsampling: view, factor: coarse), minSize: max(24, atLeast / coarse))
            .map { (rect: scaled($0.rect, by: coarse), votes: $0.neighbors) }
        let limit = 24 * coarse
        if fine < coarse, atLeast < limit {
            let small = searchDetector.detect(in: GrayImage(downsampling: view, factor: fine), minSize: max(24, atLeast / fine),
                                              maxSize: limit / fine + 2)
                .map { (rect: scaled($0.rect, by: fine), votes: $0.neighbors) }
            for s in small where !faces.contains(where: { Self.overlap($0.rect, s.rect) > 0.2 }) { faces.append(s) }
        }
        return faces.sorted { $0.rect.width * $0.rect.height > $1.rect.width * $1.rect.height }
    }

    /// The smallest second face the search looks for while a face is tracked, as a fraction of the tracked width.
    static let rivalFaceFraction = 0.6

    /// Votes a second face needs (besides being found by two searches in a row): the strict detector's rule, so
    /// that the sensitive search's stray hits on texture never make a second face.
    static let secondFaceVotes = 6

    /// Intersection over the smaller box's area (0 when apart, 1 when one holds the other).
    static func overlap(_ a: VitalsRect, _ b: VitalsRect) -> Double {
        let w = min(a.maxX, b.maxX) - max(a.x, b.x), h = min(a.maxY, b.maxY) - max(a.y, b.y)
        guard w > 0, h > 0 else { return 0 }
        return Double(w * h) / Double(max(1, min(a.width * a.height, b.width * b.height)))
    }

    /// A detection confirmed the tracked face.
    private func noteHit(at t: Double) {
        lastDetectionHit = t
        localMisses = 0
    }

    /// A detection missed the tracked face: the profile tracker keeps it until misses have lasted
    /// ``faceHoldTime`` (one missed detection, or a blink of the cascade, changes nothing).
    private func noteMiss(at t: Double) {
        localMisses += 1
        if localMisses >= 2, t - lastDetectionHit > Self.faceHoldTime { loseFace() }
    }

    /// How long the tracker holds a face the detector no longer confirms, seconds.
    static let faceHoldTime = 1.0

    private func scaled(_ r: VitalsRect, by f: Int) -> VitalsRect {
        VitalsRect(x: r.x * f, y: r.y * f, width: r.width * f, height: r.height * f)
    }

    /// Takes a detection as the face box when it differs enough from the tracked one (detector jitter would
    /// otherwise step the skin averages); a box that replaces a tracked one is spliced into the colours, and the
    /// time of any change (`t`) kept in ``lastBoxChange``.
    func adopt(_ face: VitalsRect, view: VitalsPixelView, force: Bool, at t: Double) {
        var replaced: (box: VitalsRect, position: (x: Double, y: Double), background: [VitalsRect])?
        if !force, let current = trackedBox {
            let dcx = Double(face.x + face.width / 2 - current.x - current.width / 2)
            let dcy = Double(face.y + face.height / 2 - current.y - current.height / 2)
            let ds = Double(face.width - current.width)
            let w = Double(current.width)
            if abs(dcx) < 0.12 * w, abs(dcy) < 0.12 * w, abs(ds) < 0.2 * w { return }
            anchorOffset.x += Double(current.x - face.x)
            anchorOffset.y += Double(current.y - face.y)
            replaced = (current, skinPosition, backgroundRegions)
        } else {
            // A face found afresh (after a loss, or the first) starts from its own colour level.
            splice = ColourSplice()
        }
        lastBoxChange = t
        anchorBox = face
        trackedBox = face
        subpixel = (Double(face.x), Double(face.y))
        skinPosition = subpixel
        let maxShift = max(4, face.width / 12)
        faceMotionX = ProfileMotion(region: face, vertical: false, maxShift: maxShift)
        faceMotionY = ProfileMotion(region: face, vertical: true, maxShift: maxShift)
        headMotion = ProfileMotion(region: face, vertical: true, maxShift: maxShift)
        lastFaceMatch = (0, cameraMotion.y)
        headY = anchorOffset.y + Double(face.y)
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
        if let replaced {
            // The same frame through the old regions and the new ones, so the traces continue at their level.
            let old = Self.skinColour(view, box: replaced.box, position: replaced.position)
            let new = Self.skinColour(view, box: face, position: skinPosition)
            splice.join(old: ColourSplice.Colours(skin: old.rgb, parts: old.parts?.colours,
                                                  background: Self.meanColour(of: replaced.background, in: view)),
                        new: ColourSplice.Colours(skin: new.rgb, parts: new.parts?.colours,
                                                  background: Self.meanColour(of: side, in: view)))
        }
        if backgroundVertical == nil || force {
            backgroundVertical = ProfileMotionGroup(regions: side, vertical: true, maxShift: shift)
            backgroundHorizontal = ProfileMotionGroup(regions: side, vertical: false, maxShift: shift)
        } else {
            backgroundVertical?.reset(regions: side)
            backgroundHorizontal?.reset(regions: side)
        }
    }

    private func loseFace() {
        trackedBox = nil
        anchorBox = nil
        localMisses = 0
        scout.reset()
    }
}
