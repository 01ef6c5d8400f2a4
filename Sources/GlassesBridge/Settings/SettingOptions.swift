// The run settings a caller chooses among: output format, submitted layout, orientation fix.

/// How vitals and events are written: the value of `--format`.
public enum OutputFormat: String, Sendable, Hashable, CaseIterable {
    /// For people: a live status line on a terminal, timestamped lines otherwise.
    case text
    /// One JSON object per line per event, ending with a summary object.
    case ndjson
    /// The vitals time series as comma-separated values.
    case csv
}

/// The pixel layout frames are submitted to custom input in: the value of `--pixel-format`.
public enum SubmitPixelFormat: String, Sendable, Hashable, CaseIterable {
    /// 32-bit BGRA.
    case bgra
    /// 8-bit bi-planar NV12 (video range, as the glasses send it).
    case nv12
}

/// The orientation fix-up custom input applies to every frame: the value of `--transform`.
public enum TransformOption: String, Sendable, Hashable, CaseIterable {
    /// Pixels are already upright.
    case none
    /// Rotate 90° clockwise.
    case rotate90cw
    /// Rotate 90° counter-clockwise.
    case rotate90ccw
    /// Rotate 180°.
    case rotate180
    /// Mirror left and right.
    case mirrorHorizontal = "mirror-horizontal"
    /// Mirror top and bottom.
    case mirrorVertical = "mirror-vertical"
}
