import Foundation

/// Keeps the colour traces continuous when the tracked face box is replaced by a new detection.
///
/// The skin regions are placed from the face box, and the background regions beside the head from it too. When a
/// detection differs enough from the tracked box to be adopted, every region moves onto other pixels, and the mean
/// colours step: on a simulated face through HEVC one re-adoption stepped the skin's luma by 3 %, ten times the
/// pulse, and the step's broadband transient hid the pulse from every method for the 12 s it stayed in the window
/// (HRV's window holds it for 60 s). At the frame of a re-adoption the engine measures the colours with the old regions and
/// with the new ones on the same picture, and from then on scales the new ones by the old over the new, channel by
/// channel: the pulse methods read colour relative to its local mean, so a gain, not an offset, is what keeps a
/// region of other skin continuous with the last.
///
/// A plain value: the engine owns one, folds in each re-adoption with ``join(old:new:)`` and scales every sample
/// with ``applied(to:)``; a restarted measurement starts from ``init()``.
struct ColourSplice {
    /// The colours one set of regions measured on one frame: the whole skin, its parts, and the background.
    struct Colours {
        var skin: RGB
        var parts: [RGB]?
        var background: RGB?
    }

    private var skin = Gain()
    private var parts: [Gain] = []
    private var background = Gain()

    /// How far one join may scale a channel: a region that lands on other skin changes its mean by a few per cent;
    /// a ratio beyond this says one of the two regions is off the face or clipped, and that join is left out.
    static let gainRange = 0.5 ... 2.0

    /// The lowest mean (levels of 255) a channel may have for its ratio to be taken.
    static let darkest = 2.0

    /// Folds in one change of regions, measured on the same frame before (`old`) and after (`new`).
    mutating func join(old: Colours, new: Colours) {
        skin.join(old.skin, new.skin)
        if let oldParts = old.parts, let newParts = new.parts, oldParts.count == newParts.count {
            if parts.count != newParts.count { parts = newParts.map { _ in Gain() } }
            for i in newParts.indices { parts[i].join(oldParts[i], newParts[i]) }
        }
        if let oldBackground = old.background, let newBackground = new.background {
            background.join(oldBackground, newBackground)
        }
    }

    /// `colours` (measured with the current regions) scaled onto the level of the first regions.
    func applied(to colours: Colours) -> Colours {
        var out = colours
        out.skin = skin.applied(to: colours.skin)
        if let p = colours.parts, parts.count == p.count { out.parts = zip(p, parts).map { $1.applied(to: $0) } }
        out.background = colours.background.map { background.applied(to: $0) }
        return out
    }

    /// A per-channel gain, the product of every join's old-over-new ratio.
    private struct Gain {
        var r = 1.0, g = 1.0, b = 1.0

        mutating func join(_ old: RGB, _ new: RGB) {
            // All three channels or none: a gain on one channel alone would tint the skin and read as chroma.
            guard let gr = Self.ratio(old.r, new.r), let gg = Self.ratio(old.g, new.g), let gb = Self.ratio(old.b, new.b) else { return }
            r *= gr; g *= gg; b *= gb
        }

        func applied(to c: RGB) -> RGB { RGB(r: c.r * r, g: c.g * g, b: c.b * b) }

        private static func ratio(_ old: Double, _ new: Double) -> Double? {
            guard old >= ColourSplice.darkest, new >= ColourSplice.darkest else { return nil }
            let q = old / new
            return ColourSplice.gainRange.contains(q) ? q : nil
        }
    }
}
