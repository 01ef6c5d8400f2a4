import Foundation

// Stream descriptions (plain values) and the two owning handles over liblsl: an outlet and an inlet. Each class
// owns exactly one liblsl handle and destroys it in deinit; none is Sendable, their owners confine them.

/// An XML element of a stream's `desc`: a name, and either text or children (LSL's meta-data conventions,
/// `channels/channel/label`, `acquisition/manufacturer`, …).
package struct LSLElement: Sendable, Hashable {
    /// The element's name.
    package var name: String
    /// Its text, for a leaf.
    package var value: String?
    /// Its children, for a branch.
    package var children: [LSLElement]

    /// A leaf: `<name>value</name>`.
    package static func leaf(_ name: String, _ value: String) -> LSLElement {
        LSLElement(name: name, value: value, children: [])
    }

    /// A branch: `<name>children…</name>`.
    package static func branch(_ name: String, _ children: [LSLElement]) -> LSLElement {
        LSLElement(name: name, value: nil, children: children)
    }
}

/// What a stream is: the fields of `lsl_create_streaminfo` and the `desc` tree.
package struct LSLStreamDescription: Sendable, Hashable {
    /// The sample format of every channel.
    package enum Format: Int32, Sendable, Hashable {
        /// `cft_double64`.
        case double64 = 2
        /// `cft_string`.
        case string = 3
    }

    /// One channel, as the XDF meta-data recommends: label, unit, type.
    package struct Channel: Sendable, Hashable {
        package var label: String
        package var unit: String
        package var type: String

        package init(label: String, unit: String, type: String) {
            self.label = label
            self.unit = unit
            self.type = type
        }
    }

    package var name: String
    package var type: String
    package var format: Format
    /// Samples per second; 0 is LSL's irregular rate.
    package var nominalRate: Double
    /// Stable across restarts of the same source, so a recorder reconnects to it.
    package var sourceID: String
    package var channels: [Channel]
    /// Other `desc` elements, after `channels`.
    package var extra: [LSLElement]

    package init(
        name: String, type: String, format: Format, nominalRate: Double, sourceID: String, channels: [Channel],
        extra: [LSLElement] = []
    ) {
        self.name = name
        self.type = type
        self.format = format
        self.nominalRate = nominalRate
        self.sourceID = sourceID
        self.channels = channels
        self.extra = extra
    }

    /// The whole `desc` tree: `channels` then ``extra``.
    package var desc: [LSLElement] {
        let channelElements = channels.map { channel in
            LSLElement.branch("channel", [.leaf("label", channel.label), .leaf("unit", channel.unit), .leaf("type", channel.type)])
        }
        return [.branch("channels", channelElements)] + extra
    }
}

/// Owns one `lsl_outlet`: a stream others can resolve, pushed to with a timestamp on liblsl's clock.
package final class LSLOutlet {
    private let library: LSLLibrary
    private let handle: OpaquePointer
    /// The stream it serves.
    package let description: LSLStreamDescription

    /// Creates the stream and opens its outlet (liblsl announces it on the network at once).
    /// - Throws: ``LSLError`` (``LSLError/Code/callFailed``) when liblsl refuses the stream.
    package init(_ description: LSLStreamDescription, library: LSLLibrary) throws(LSLError) {
        self.library = library
        self.description = description
        guard let info = library.createStreamInfo(
            description.name, description.type, Int32(description.channels.count), description.nominalRate,
            description.format.rawValue, description.sourceID
        ) else {
            throw LSLError(.callFailed, "liblsl could not describe the stream \(description.name)")
        }
        defer { library.destroyStreamInfo(info) }
        if let root = library.getDescription(info) {
            for element in description.desc { Self.append(element, to: root, library: library) }
        }
        // chunk size 0 (each sample sent as pushed), 360 s kept for a consumer that falls behind (liblsl's default).
        guard let outlet = library.createOutlet(info, 0, 360) else {
            throw LSLError(.callFailed, "liblsl could not open an outlet for the stream \(description.name)")
        }
        handle = outlet
    }

    private static func append(_ element: LSLElement, to parent: OpaquePointer, library: LSLLibrary) {
        if let value = element.value {
            _ = library.appendChildValue(parent, element.name, value)
            return
        }
        guard let node = library.appendChild(parent, element.name) else { return }
        for child in element.children { append(child, to: node, library: library) }
    }

    /// Pushes one sample of numbers (one per channel) stamped `timestamp` on liblsl's clock; never blocks. Returns
    /// whether liblsl took it.
    @discardableResult
    package func push(_ values: [Double], at timestamp: Double) -> Bool {
        precondition(values.count == description.channels.count && description.format == .double64, "Invalid sample for \(description.name)")
        return values.withUnsafeBufferPointer { library.pushDoubles(handle, $0.baseAddress, timestamp, 1) } == 0
    }

    /// Pushes one sample of strings (one per channel) stamped `timestamp` on liblsl's clock; never blocks.
    @discardableResult
    package func push(_ values: [String], at timestamp: Double) -> Bool {
        precondition(values.count == description.channels.count && description.format == .string, "Invalid sample for \(description.name)")
        let copies = values.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        guard !copies.contains(nil) else { return false }
        var pointers = copies.map { $0.map { UnsafePointer($0) } }
        return pointers.withUnsafeMutableBufferPointer { library.pushStrings(handle, $0.baseAddress, timestamp, 1) } == 0
    }

    deinit {
        library.destroyOutlet(handle)
    }
}

@available(*, unavailable)
extension LSLOutlet: Sendable {}

/// Owns one `lsl_inlet`: a resolved stream of numbers, pulled sample by sample.
package final class LSLInlet {
    private let library: LSLLibrary
    private let handle: OpaquePointer
    /// Channels per sample.
    package let channelCount: Int

    /// Resolves the first stream whose `property` (`name` or `type`) is `value` and opens an inlet to it.
    /// - Throws: ``LSLError`` (``LSLError/Code/streamNotFound``) when none answers within `timeout` seconds.
    package init(property: String, value: String, timeout: Double, library: LSLLibrary) throws(LSLError) {
        self.library = library
        var found: [OpaquePointer?] = Array(repeating: nil, count: 8)
        let count = found.withUnsafeMutableBufferPointer {
            library.resolveByProperty($0.baseAddress, UInt32($0.count), property, value, 1, timeout)
        }
        let infos = found.prefix(max(0, Int(min(count, 8)))).compactMap { $0 }
        defer { for info in infos { library.destroyStreamInfo(info) } }
        guard let info = infos.first else {
            throw LSLError(.streamNotFound, "no LSL stream with \(property) '\(value)' answered within \(Int(timeout)) s")
        }
        let channels = Int(library.channelCount(info))
        guard channels >= 1 else {
            throw LSLError(.callFailed, "the LSL stream with \(property) '\(value)' has no channels")
        }
        // 360 s of buffer, samples as they come, recover from a restarted source.
        guard let inlet = library.createInlet(info, 360, 0, 1) else {
            throw LSLError(.callFailed, "liblsl could not open an inlet to the stream with \(property) '\(value)'")
        }
        handle = inlet
        channelCount = channels
    }

    /// The next sample and its timestamp on the sender's clock, waiting at most `timeout` seconds; nil on timeout.
    /// - Throws: ``LSLError`` (``LSLError/Code/streamLost``) when the stream is gone.
    package func pull(timeout: Double) throws(LSLError) -> (values: [Double], timestamp: Double)? {
        var values = [Double](repeating: .nan, count: channelCount)
        var code: Int32 = 0
        let timestamp = values.withUnsafeMutableBufferPointer {
            library.pullDoubles(handle, $0.baseAddress, Int32($0.count), timeout, &code)
        }
        if code == -2 { throw LSLError(.streamLost, "the LSL stream was lost") }
        guard code == 0, timestamp > 0, timestamp.isFinite else { return nil }
        return (values, timestamp)
    }

    /// The offset that puts the sender's timestamps on this machine's liblsl clock (`lsl_time_correction`), nil when
    /// it cannot be measured within `timeout` seconds.
    package func timeCorrection(timeout: Double) -> Double? {
        var code: Int32 = 0
        let offset = library.timeCorrection(handle, timeout, &code)
        guard code == 0, offset.isFinite else { return nil }
        return offset
    }

    deinit {
        library.destroyInlet(handle)
    }
}

@available(*, unavailable)
extension LSLInlet: Sendable {}
